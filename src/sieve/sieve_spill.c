/*-------------------------------------------------------------------------
 *
 * sieve_spill.c
 *	  What a flush keeps aside in temporary files: the URLs, in the order
 *	  they were read, so that the flush's sorts carry only fixed-size rows;
 *	  and the rows found new, until the first sort is done.
 *
 * A flush sorts every row of discovered by signature, and then the rows
 * whose signature is new by position.  Were the URLs carried through both
 * sorts, every merge pass of the external sorts would copy them again
 * (a sort with a few MB of work_mem merges a 10M-row batch in several
 * passes).  Instead each URL is written once, as discovered stored it
 * (compressed, if it was), to a temporary file, and the sorts carry its
 * offset in that file: (sig, pos, offset) rows of 24 bytes.  The new URLs
 * are read back by offset when they are appended to the frontier; since
 * discovered is usually read in the order of its positions, those reads go
 * forward through the file, mostly within the block already buffered.
 *
 * The rows found new, (pos, offset, sig), are found while the sort by
 * signature is read; they wait in a second file until that sort is over,
 * and then go to the sort by position, so that each sort has all of its
 * share of work_mem to itself.
 *
 * The files are BufFiles: their buffer is one block, they live under the
 * current resource owner (so an ERROR closes and removes them), and they
 * count against temp_file_limit like the sorts' own files.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "storage/buffile.h"
#include "utils/memutils.h"

#include "sieve.h"

struct SieveSpill
{
	BufFile    *file;
	char	   *buffer;			/* the last URL read back */
	Size		buffer_size;
	BufFile    *rows;			/* the rows found new, once there is one */
	bool		reading_rows;
};

typedef struct SpillRow
{
	int64		pos;
	int64		offset;
	int64		sig;
} SpillRow;

/*
 * An offset packs BufFile's (segment number, offset in the segment): a
 * segment is at most 1 GB, so its offsets fit in the low 32 bits
 */
#define SPILL_OFFSET_BITS	32

SieveSpill *
sieve_spill_begin(void)
{
	SieveSpill *spill = palloc0(sizeof(SieveSpill));

	spill->file = BufFileCreateTemp(false);
	return spill;
}

/* Writes url (a varlena, not external) and returns its offset */
int64
sieve_spill_write(SieveSpill *spill, struct varlena *url)
{
	int			fileno;
	off_t		offset;
	uint32		size = VARSIZE_ANY(url);

	Assert(!VARATT_IS_EXTERNAL(url));
	BufFileTell(spill->file, &fileno, &offset);
	Assert(offset >= 0 && (uint64) offset < ((uint64) 1 << SPILL_OFFSET_BITS));
	BufFileWrite(spill->file, (void *) &size, sizeof(size));
	BufFileWrite(spill->file, (void *) url, size);
	return ((int64) fileno << SPILL_OFFSET_BITS) | (int64) offset;
}

static void
spill_read(SieveSpill *spill, void *into, size_t size)
{
	if (BufFileRead(spill->file, into, size) != size)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a URL back from the flush's temporary file")));
}

/*
 * The URL written at offset, valid until the next call: as it was written,
 * so possibly with a short header or compressed inline
 */
struct varlena *
sieve_spill_read(SieveSpill *spill, int64 offset)
{
	uint32		size;

	if (BufFileSeek(spill->file, (int) (offset >> SPILL_OFFSET_BITS),
					(off_t) (offset & (((int64) 1 << SPILL_OFFSET_BITS) - 1)),
					SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not seek in the flush's temporary file")));
	spill_read(spill, &size, sizeof(size));
	if (size < VARHDRSZ_SHORT || size > MaxAllocSize)
		elog(ERROR, "sieve_flush: a URL of %u bytes in the temporary file", size);
	if (size > spill->buffer_size)
	{
		Size		new_size = Max(size, 2 * spill->buffer_size);

		spill->buffer = spill->buffer == NULL ? palloc(new_size) :
			repalloc(spill->buffer, new_size);
		spill->buffer_size = new_size;
	}
	spill_read(spill, spill->buffer, size);
	return (struct varlena *) spill->buffer;
}

/* Appends a row found new */
void
sieve_spill_row(SieveSpill *spill, int64 pos, int64 offset, int64 sig)
{
	SpillRow	row = {pos, offset, sig};

	Assert(!spill->reading_rows);
	if (spill->rows == NULL)
		spill->rows = BufFileCreateTemp(false);
	BufFileWrite(spill->rows, (void *) &row, sizeof(row));
}

/* The rows found new, in the order they were appended; false after the last */
bool
sieve_spill_next_row(SieveSpill *spill, int64 *pos, int64 *offset, int64 *sig)
{
	SpillRow	row;
	size_t		got;

	if (spill->rows == NULL)
		return false;
	if (!spill->reading_rows)
	{
		if (BufFileSeek(spill->rows, 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not seek in the flush's temporary file")));
		spill->reading_rows = true;
	}
	got = BufFileRead(spill->rows, &row, sizeof(row));
	if (got == 0)
		return false;
	if (got != sizeof(row))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a row back from the flush's temporary file")));
	*pos = row.pos;
	*offset = row.offset;
	*sig = row.sig;
	return true;
}

void
sieve_spill_end(SieveSpill *spill)
{
	BufFileClose(spill->file);
	if (spill->rows != NULL)
		BufFileClose(spill->rows);
	if (spill->buffer != NULL)
		pfree(spill->buffer);
	pfree(spill);
}
