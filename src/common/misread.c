/*-------------------------------------------------------------------------
 *
 * misread.c
 *	  The text forms of the functions that test and add a value (shared
 *	  filters, the exact online store) refuse a text that a driver sent
 *	  for another shape: a list, a tuple, bytes in hex.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "misread.h"

/*
 * What a driver sends is not always what its user meant, and the SQL
 * types cannot tell (a text is a text): the text forms refuse the values
 * that are another shape in a text's clothes, which no URL is.
 *
 *	- an array literal, "{...}": a list sent untyped (psycopg 3's Python
 *	  list, any client's '{u1,u2}') reaches the one-value function, which
 *	  would take the whole list for one value;
 *	- a record literal, "(...)": psycopg 3 sends a Python tuple as a record,
 *	  which reaches it the same way;
 *	- bytea's hex output, "\x" and an even, non-zero number of lower-case
 *	  hex digits: bytes sent with a ::text (or a list of them with
 *	  ::text[]) cast, which gives their hex, not their bytes.
 *
 * The literals are recognised as array_in and record_in read them, around
 * whitespace (PostgreSQL's: space, \t, \n, \r, \v, \f).  The one-value
 * forms check all three; the text[] batch checks each element for the
 * third (its elements are one value each) before it adds any.  The bytea
 * forms take any bytes.
 */
static inline bool
sbf_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool
sbf_is_bytea_hex(const char *data, int len)
{
	int			i;

	if (len < 4 || len % 2 != 0 || data[0] != '\\' || data[1] != 'x')
		return false;
	for (i = 2; i < len; i++)
		if (!((data[i] >= '0' && data[i] <= '9') || (data[i] >= 'a' && data[i] <= 'f')))
			return false;
	return true;
}

#define SBF_BYTEA_HEX_DETAIL \
	"A text value that is \"\\x\" and an even number of hex digits is what a bytea cast to text gives: a client that passes bytes with a text cast (psycopg's bytes with %%s::text) would add their hex digits, not the bytes."

/*
 * Refuse a one-value text of another shape (above).  Returns the value,
 * detoasted when it was read, so that it is not detoasted twice.
 */
Datum
sbf_refuse_misread_text(Datum value, SbfElementKind kind)
{
	text	   *t;
	const char *data;
	int			len;
	int			first = 0;
	int			last;

	if (kind != SBF_ELEMENT_TEXT)
		return value;
	t = DatumGetTextPP(value);
	data = VARDATA_ANY(t);
	len = VARSIZE_ANY_EXHDR(t);
	while (first < len && sbf_is_space(data[first]))
		first++;
	last = len - 1;
	while (last > first && sbf_is_space(data[last]))
		last--;

	if (last > first && data[first] == '{' && data[last] == '}')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value \"%.*s%s\" looks like an array literal, not one value",
						pg_mbcliplen(data, len, 40), data, len > 40 ? "..." : ""),
				 errdetail("A text value that begins with \"{\" and ends with \"}\", whitespace around them aside, is refused: a client that sends a list as an untyped parameter gets the one-value function, which would take the whole list for one value."),
				 errhint("Cast the parameter to text[] (or bytea[], bigint[]) to add or test each element; pass a value that really has this form as bytea.")));
	if (last > first && data[first] == '(' && data[last] == ')')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value \"%.*s%s\" looks like a record literal, not one value",
						pg_mbcliplen(data, len, 40), data, len > 40 ? "..." : ""),
				 errdetail("A text value that begins with \"(\" and ends with \")\", whitespace around them aside, is refused: psycopg sends a Python tuple as a record, which the one-value function would take for one value."),
				 errhint("Pass a list and cast the parameter to text[] to add or test each element; pass a value that really has this form as bytea.")));
	if (sbf_is_bytea_hex(data, len))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value \"%.*s%s\" looks like bytea in hex, not text",
						pg_mbcliplen(data, len, 40), data, len > 40 ? "..." : ""),
				 errdetail(SBF_BYTEA_HEX_DETAIL),
				 errhint("Pass bytes as bytea, without the cast to text: the bytea form adds the bytes themselves.")));
	return PointerGetDatum(t);
}

/*
 * Refuse a text[] batch any of whose elements is bytea's hex output,
 * before anything is added: bytes a filter of transactional => false or a
 * stable filter set at once would stay after the ERROR.  Its elements are
 * read in place (an array's elements are never compressed on their own).
 */
void
sbf_refuse_bytea_hex_elements(ArrayType *values)
{
	ArrayIterator it = array_create_iterator(values, 0, NULL);
	Datum		value;
	bool		isnull;
	int			i;

	for (i = 1; array_iterate(it, &value, &isnull); i++)
	{
		text	   *t;

		if (isnull)
			continue;
		t = DatumGetTextPP(value);
		if (sbf_is_bytea_hex(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("element %d of the array, \"%.*s%s\", looks like bytea in hex, not text",
							i, Min((int) VARSIZE_ANY_EXHDR(t), 40), VARDATA_ANY(t),
							VARSIZE_ANY_EXHDR(t) > 40 ? "..." : ""),
					 errdetail(SBF_BYTEA_HEX_DETAIL " No element was added."),
					 errhint("Pass a list of bytes as bytea[], without the cast to text[]: the bytea[] form adds the bytes themselves.")));
		if (i % (1 << 16) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	array_free_iterator(it);
}
