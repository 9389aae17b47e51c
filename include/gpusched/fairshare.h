/*
 * gpusched — queue shares, as Volcano's proportion plugin defines them.
 *
 * A queue's deserved share is found by water-filling: capacity is handed out in proportion to
 * the queues' weights; a queue whose share would pass what it can use (the smaller of its
 * capability and its demand) is capped there and the rest is shared again among the others,
 * until nothing is left or every queue is capped.
 * Units: whatever the caller passes (milli-GPU here), integers; remainders of a division go to
 * the lowest-indexed queues, so results are exact and repeatable.
 */
#ifndef GPUSCHED_FAIRSHARE_H
#define GPUSCHED_FAIRSHARE_H

#include <stddef.h>
#include <stdint.h>

/*
 * gs_fairshare_waterfill() - deserved shares of @n queues.
 * @capacity: amount to hand out, >= 0.
 * @weight: per queue, >= 1 (a weight < 1 counts as 1).
 * @limit: per queue, the most it can use (min of capability and demand), >= 0.
 * @deserved: out, per queue; deserved[i] <= limit[i] and the sum <= @capacity.
 * Complexity: O(n^2) in the worst case (one queue capped per round); n is small.
 */
void gs_fairshare_waterfill(int64_t capacity, const int32_t *weight, const int64_t *limit, size_t n,
                            int64_t *deserved);

/*
 * gs_fairshare_jain() - Jain's fairness index of @n non-negative values, in millis (1000 = all
 * equal; 1000/n = one takes all); 1000 when every value is 0 or n == 0.
 */
int32_t gs_fairshare_jain(const int64_t *x, size_t n);

#endif
