/* Shared by the fuzz target and its PostgreSQL stand-ins */
#ifndef SBF_FUZZ_H
#define SBF_FUZZ_H

#include <setjmp.h>

extern sigjmp_buf fuzz_error_jump;
extern int	fuzz_last_sqlstate;
extern void fuzz_free_all(void);

#endif
