/*-------------------------------------------------------------------------
 *
 * sizing.h
 *	  The formulas that size filters and predict their accuracy.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SBF_SIZING_H
#define SBF_SIZING_H

#include "postgres.h"

extern void sbf_check_fpr(double fpr);
extern void sbf_check_capacity(int64 capacity);
extern void bloom_check_bits(int64 bits);
extern void sbf_check_bits(int64 bits);
extern void sbf_check_hashes(int32 hashes);
extern uint64 bloom_bits_for(int64 capacity, double fpr);
extern uint64 bloom_value_bits_for(int64 capacity, double fpr);
extern int	bloom_hashes_for(uint64 bits, int64 capacity);
extern double bloom_fpr_after(uint64 bits, int hashes, double n);
extern double sbf_blocked_fpr(uint64 blocks, uint64 block_bits, int hashes,
							  double n);
extern double sbf_shared_bloom_fpr(int layout, uint64 pages, int hashes, double n);
extern uint64 sbf_blocked_bloom_pages(int layout, int64 capacity, double fpr,
									  int *hashes);
extern int64 sbf_blocked_bloom_capacity(int layout, uint64 pages, double fpr);

extern void stablebloom_check_params(int64 cells, int32 hashes, int32 max);
extern void stablebloom_check_decrements(int64 cells, double decrements);
extern double stablebloom_p_for(double fpr, int32 hashes, int64 cells, int32 max);
extern double stablebloom_stable_zeros_for(int64 cells, int32 hashes,
										   double decrements, int32 max);
extern double stablebloom_fpr_for(int64 cells, int32 hashes, double decrements,
								  int32 max);
extern int64 stablebloom_decrements_for(double fpr, int32 hashes, int64 cells,
									   int32 max);

/* Sized sliding filters have at most this many slices (format.h allows more) */
#define SLIDINGBLOOM_SIZED_MAX_SLICES	64

extern void sbf_check_window(int64 window);
extern double slidingbloom_run_prob(const double *fill, int slices, int hashes);
extern double slidingbloom_fpr_for(int hashes, int slices, uint64 slice_bits,
								   uint64 generation);
extern double slidingbloom_expected_fpr_for(int hashes, int slices,
											uint64 slice_bits, uint64 generation);
extern double slidingbloom_stale_rate_for(int hashes, int slices, uint64 slice_bits,
										  uint64 generation, uint64 distance);
extern double slidingbloom_stamped_fpr(int hashes, uint64 cells, double live);
extern void slidingbloom_size_for(int64 window, double fpr, int *hashes,
								  int *slices, uint64 *slice_bits,
								  uint64 *generation);

#endif							/* SBF_SIZING_H */
