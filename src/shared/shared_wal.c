/*-------------------------------------------------------------------------
 *
 * shared_wal.c
 *	  Shared filters: the WAL of a change to a page.  Logged filters change
 *	  their pages through generic WAL, as contrib/bloom does (no
 *	  shared_preload_libraries): a page's first write is a full-page image
 *	  through GenericXLog; later changes are logged as the few bytes they
 *	  changed, in generic WAL's own record format, which core's
 *	  generic_redo replays.  The only WAL code of src/shared.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pg_version_compat.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "port/pg_bitutils.h"
#include "port/pg_bswap.h"

#include "shared.h"

/*
 * The changes to one page, as the fragments of a generic WAL record
 * (access/generic_xlog.c): each is <offset uint16, length uint16, bytes>,
 * and core's generic_redo applies them, so no preloading is needed.  At
 * most every byte of the block and the special space, in fragments more
 * than SBF_DELTA_GAP unchanged bytes apart (sbf_delta_region): under twice
 * a page.
 */

/* Append to DELTA the fragment of LENGTH bytes at OFFSET of the page */
void
sbf_delta_append(SbfDelta *delta, const char *page, Size offset, Size length)
{
	uint16		off16 = (uint16) offset;
	uint16		len16 = (uint16) length;

	Assert(delta->len + sizeof(off16) + sizeof(len16) + length <= sizeof(delta->data));
	memcpy(delta->data + delta->len, &off16, sizeof(off16));
	memcpy(delta->data + delta->len + sizeof(off16), &len16, sizeof(len16));
	memcpy(delta->data + delta->len + sizeof(off16) + sizeof(len16),
		   page + offset, length);
	delta->len += sizeof(off16) + sizeof(len16) + length;
}

/*
 * The bytes of [pos, pos + 8) that differ between BEFORE and AFTER, as the
 * bits of a 64-bit word in memory order (byte pos in the lowest 8 bits)
 */
static inline uint64
sbf_delta_word_xor(const char *before, const char *after, Size pos)
{
	uint64		a;
	uint64		b;

	memcpy(&a, before + pos, sizeof(uint64));
	memcpy(&b, after + pos, sizeof(uint64));
#ifdef WORDS_BIGENDIAN
	return pg_bswap64(a ^ b);
#else
	return a ^ b;
#endif
}

/*
 * Append to DELTA the bytes of [start, end) that differ between BEFORE and
 * AFTER, in few bytes: a fragment's header is SBF_DELTA_GAP bytes, so
 * changed bytes at most that far apart go in one fragment with the
 * unchanged ones between them.  An element sets a few bits scattered over
 * its line, so it is bytes, not words, that change (a quarter to a third
 * fewer bytes of WAL a value than logging the changed 8-byte words).  The
 * region is compared 8 bytes at a time, a changed word taken from its
 * first changed byte to its last: comparing each byte, an unpredictable
 * branch a byte, made a logged add as slow as before this saved anything.
 */
#define SBF_DELTA_GAP	(2 * sizeof(uint16))

void
sbf_delta_region(SbfDelta *delta, const char *before, const char *after,
				 Size start, Size end)
{
	Size		pos;
	Size		run = 0;		/* the open fragment: [run, run_end) */
	Size		run_end = 0;

	for (pos = start; pos < end; pos += sizeof(uint64))
	{
		Size		first;
		Size		last;

		if (end - pos >= sizeof(uint64))
		{
			uint64		changed = sbf_delta_word_xor(before, after, pos);

			if (changed == 0)
				continue;
			first = pos + pg_rightmost_one_pos64(changed) / 8;
			last = pos + pg_leftmost_one_pos64(changed) / 8 + 1;
		}
		else
		{
			/* the region's last bytes, fewer than 8 */
			for (first = pos; first < end && before[first] == after[first]; first++)
				;
			if (first == end)
				break;
			for (last = end; before[last - 1] == after[last - 1]; last--)
				;
		}
		if (run_end > run && first - run_end <= SBF_DELTA_GAP)
			run_end = last;
		else
		{
			if (run_end > run)
				sbf_delta_append(delta, after, run, run_end - run);
			run = first;
			run_end = last;
		}
	}
	if (run_end > run)
		sbf_delta_append(delta, after, run, run_end - run);
}

/*
 * Log the fragments of the n DELTAS as one generic WAL record of the
 * changes to BUFS (in a critical section, the buffers locked exclusively;
 * at most MAX_GENERIC_XLOG_PAGES, which generic_redo replays): one record
 * header, and one relation in the block references, for them all.  A
 * buffer whose delta is empty did not change and is left out.
 */
void
sbf_log_deltas(const Buffer *bufs, SbfDelta *const *deltas, int n)
{
	XLogRecPtr	lsn;
	int			registered = 0;
	int			i;

	Assert(n <= MAX_GENERIC_XLOG_PAGES);
	for (i = 0; i < n; i++)
		if (deltas[i]->len > 0)
			break;
	if (i == n)
		return;
	XLogBeginInsert();
	for (i = 0; i < n; i++)
	{
		if (deltas[i]->len == 0)
			continue;
		sbf_mark_dirty(bufs[i]);
		XLogRegisterBuffer(registered, bufs[i], REGBUF_STANDARD);
		XLogRegisterBufData(registered, deltas[i]->data, deltas[i]->len);
		registered++;
	}
	lsn = XLogInsert(RM_GENERIC_ID, 0);
	for (i = 0; i < n; i++)
		if (deltas[i]->len > 0)
			PageSetLSN(BufferGetPage(bufs[i]), lsn);
}

/* The same for one buffer */
void
sbf_log_delta(Buffer buf, SbfDelta *delta)
{
	sbf_log_deltas(&buf, &delta, 1);
}

/*
 * Apply DELTA's fragments to a page as generic_redo does, the page's hole
 * (pd_lower to pd_upper) zeroed after them as generic_redo zeroes it: an
 * overflow page is changed in a copy (shared_pending.c), and its buffer
 * then gets exactly the bytes that replaying its record gives, on a
 * standby and after a crash.  (A fold's dropped adds past pd_lower are in
 * no fragment: left in the buffer, a later add's fragment, which skips the
 * bytes it finds unchanged, would differ from the replayed page there.)
 */
void
sbf_delta_apply(Page page, const SbfDelta *delta)
{
	PageHeader	header = (PageHeader) page;
	const char *ptr = delta->data;
	const char *end = delta->data + delta->len;

	while (ptr < end)
	{
		uint16		offset;
		uint16		length;

		memcpy(&offset, ptr, sizeof(offset));
		memcpy(&length, ptr + sizeof(offset), sizeof(length));
		ptr += sizeof(offset) + sizeof(length);
		Assert(offset + length <= BLCKSZ);
		memcpy((char *) page + offset, ptr, length);
		ptr += length;
	}
	if (header->pd_lower < header->pd_upper && header->pd_upper <= BLCKSZ)
		memset((char *) page + header->pd_lower, 0,
			   header->pd_upper - header->pd_lower);
}
