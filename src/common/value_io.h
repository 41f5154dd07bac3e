/*-------------------------------------------------------------------------
 *
 * value_io.h
 *	  Text and binary framing shared by the sbf types, and the bool[]
 *	  answers of the functions taking arrays.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_VALUE_IO_H
#define SBF_VALUE_IO_H

#include "postgres.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/array.h"

extern struct varlena *sbf_value_from_text(const char *str, const char *typname);
extern char *sbf_value_to_text(const struct varlena *value);
extern struct varlena *sbf_value_from_binary(StringInfo buf, const char *typname);
extern bytea *sbf_value_to_binary(const struct varlena *value);
extern struct varlena *sbf_detoast_arg_cached(FunctionCallInfo fcinfo, int argno);
extern struct varlena *sbf_value_copy(const struct varlena *value);
extern void *sbf_palloc0(Size size);
extern void sbf_check_magic(const struct varlena *value, uint32 magic,
							uint16 version, const char *typname,
							int sqlstate);
extern ArrayType *sbf_answers_array(const ArrayType *values, const bool *answers,
									int n, int nnulls);

#endif							/* SBF_VALUE_IO_H */
