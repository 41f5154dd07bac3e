/*-------------------------------------------------------------------------
 *
 * misread.h
 *	  The refusal of a text that a driver sent for another shape
 *	  (misread.c), for the text forms of the functions that test and add.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_MISREAD_H
#define SBF_MISREAD_H

#include "postgres.h"

#include "utils/array.h"

#include "hash.h"

extern Datum sbf_refuse_misread_text(Datum value, SbfElementKind kind);
extern void sbf_refuse_bytea_hex_elements(ArrayType *values);

#endif							/* SBF_MISREAD_H */
