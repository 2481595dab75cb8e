/* The flow solver: transfers sharing capacities, max-min fair.
 *
 * A resource is anything with a capacity in bytes/s (a link direction, a
 * NIC port, a PCIe lane group, a memory bus). A flow moves `bytes` across a
 * path of resources, optionally under its own rate cap, and calls its
 * handler when the last byte is through. Rates are max-min fair
 * (progressive filling). Every change at one instant (starts, finishes) is
 * batched into one solve event at that instant, and a solve only touches
 * the connected component of flows and resources the changes reach, so
 * independent transfers cost O(path length) each, not O(flows). Flows are
 * connected only through resources two or more of them cross and could
 * fill (the sum of their upper bounds, caps and path capacities, reaches
 * its capacity); one a flow has to itself acts as a cap on it, and one its
 * flows cannot fill bounds nobody, so a solve costs the links where flows
 * really contend, not the length of their paths. A flow that can run at its own
 * limit (its cap or such a resource) without saturating any resource it
 * shares joins, and one crossing no saturated shared resource leaves,
 * without a solve: no other rate moves then. And a solve re-solves only
 * the flows the change can move: those held by the resources it touched,
 * by the resources those flows cross in turn, and so on (the others keep
 * their rates, being held where nothing changed), which in a large
 * contended fabric is a few flows where the component is thousands
 * (flow_net_set_incremental).
 *
 * A path may name a resource more than once: the flow then uses its rate
 * that many times on it (one flow standing for a lock-step set of hops,
 * such as one step of a ring, uses this). An entry of a path may weigh w
 * (flow_spec.weights): a flow at rate r then takes w x r of that
 * resource, so one resource can stand for work of several kinds at
 * different costs per byte (a host's cores, in cycles/s, crossed by
 * flows at their cycles per byte). Filling is the same with weights:
 * every unfrozen rate rises together, a resource saturates when the sum
 * of w x r over its flows reaches its capacity, and a resource one flow
 * has to itself caps it at capacity / w. Knows nothing of what flows
 * mean. */
#ifndef DPUSIM_SIM_FLOW_H
#define DPUSIM_SIM_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

typedef struct flow_net flow_net;

/* A new, empty network driven by eng (which must outlive it), or NULL when
 * out of memory. flow_net_free drops active flows without calling their
 * handlers; NULL is a no-op. */
flow_net *flow_net_new(sim_engine *eng);
void flow_net_free(flow_net *net);

/* Adds a resource of capacity cap_Bps (finite, > 0). Ids count from 0 in
 * order of creation. Returns 0, SIM_EINVAL or SIM_ENOMEM. */
int flow_res_add(flow_net *net, double cap_Bps, uint32_t *id);
size_t flow_res_count(const flow_net *net);
double flow_res_cap_Bps(const flow_net *net, uint32_t res);
/* Sum of the current rates of the flows crossing res (counted once per
 * occurrence in their paths, times its weight): in res's own units. */
double flow_res_load_Bps(const flow_net *net, uint32_t res);
/* Number of (flow, occurrence) entries crossing res now, parked flows not
 * counted, for load-aware routing: O(1) while no flow is parked, else
 * O(its entries). */
uint32_t flow_res_nflows(const flow_net *net, uint32_t res);
/* An upper bound of flow_res_nflows in O(1): the parked flows counted too
 * (flow_res_nflows reads every entry of the resource while any is parked). */
uint32_t flow_res_nflows_bound(const flow_net *net, uint32_t res);

/* A path prepared once for the many flows that cross it (a pipeline
 * connection's, every microbatch): its distinct resources with their
 * counts and weights and their caps in order, which flow_start would
 * otherwise work out from the resource ids for each flow. A flow started
 * on it (flow_spec.prepared) is the same flow, in the same state, as one
 * started on the path it was made from: only the work differs. */
typedef struct flow_path flow_path;

/* Prepares path (len ids, with weights as flow_spec's: NULL or len
 * positive finite ones) of net's resources into *out, which the caller
 * frees with flow_path_free; flows started on it hold it until they are
 * released, so it may be freed while they run. Returns 0, SIM_EINVAL (a
 * bad id or weight) or SIM_ENOMEM. */
int flow_path_new(flow_net *net, const uint32_t *path, const double *weights, uint32_t len,
		  flow_path **out);
/* Drops the caller's hold on p; NULL is a no-op. */
void flow_path_free(flow_path *p);

typedef struct flow_spec {
	uint64_t bytes;
	flow_path *prepared;   /* NULL, or the path and weights prepared by
				* flow_path_new on this net (held while the flow
				* lives): path, weights and path_len not read */
	const uint32_t *path;  /* resource ids, copied; may repeat */
	const double *weights; /* NULL, or path_len weights (finite, > 0), copied:
				* entry i takes weights[i] x the rate of path[i].
				* NULL or all 1: unweighted */
	uint32_t path_len;
	double cap_Bps;        /* rate cap; 0 means none. Needed when path_len is 0 */
	sim_handler *done;     /* called at completion with (eng, obj, data); may be NULL */
	void *obj;
	uint64_t data;
	bool keep;             /* keep the flow after completion for flow_restart */
	uint32_t tag;          /* what the flow is for, for flow_bound (the caller's) */
	uint8_t cap_class;     /* the class its cap counts under in flow_bound */
} flow_spec;

/* Starts a flow now. Its rate is set by the solve at this instant, so it
 * reads 0 until that has run. *fid (if not NULL) names it until its
 * handler returns (a kept flow: until flow_release); ids are reused
 * afterwards. Returns 0, SIM_EINVAL (bad
 * resource id or weight, no path and no cap, negative or non-finite cap)
 * or SIM_ENOMEM. A flow whose completion, at a rate a solve gives it,
 * would fall past SIM_TIME_MAX (too many bytes for its rate) fails the
 * engine: sim_fail(SIM_EOVERFLOW) with the transfer in its message; the
 * flow is left without a completion and the run stops (sim/engine.h). */
int flow_start(flow_net *net, const flow_spec *spec, uint32_t *fid);

/* A kept flow (spec.keep) that has completed runs again over the same path
 * with `bytes`, its handler getting `data`. When nothing has joined the
 * network since its last solve found it alone in its component, it keeps
 * its rate at O(1) cost (a ring's next step); otherwise it is solved like a
 * new flow, joining at the cost of the resources it shared and those other
 * flows took since it finished, not of its whole path. Returns 0, SIM_EINVAL (not kept, or still running) or
 * SIM_ENOMEM. */
int flow_restart(flow_net *net, uint32_t fid, uint64_t bytes, uint64_t data);
/* Frees a kept flow that has completed. 0 or SIM_EINVAL. */
int flow_release(flow_net *net, uint32_t fid);

/* Current rate and bytes still to send (as of now) of an active flow. */
double flow_rate_Bps(const flow_net *net, uint32_t fid);
double flow_bytes_left(const flow_net *net, uint32_t fid);

/* Totals: bytes of every flow started, bytes of every flow completed,
 * flows active now, and the number of component solves so far (joins and
 * leaves placed without one not counted). */
uint64_t flow_bytes_sent(const flow_net *net);
uint64_t flow_bytes_delivered(const flow_net *net);
size_t flow_active(const flow_net *net);
uint64_t flow_solves(const flow_net *net);

/* What bound each flow's rate, summed by what the flow is for and by what
 * bound it. Every solve knows, as it freezes a flow, which limit froze it:
 * a resource saturated (shared or its own) or the flow's own cap. A
 * resource may carry a class (flow_res_set_class, 0 unless set) and a
 * flow a tag and its cap a class (flow_spec); once flow_bound_init has
 * sized the table, flow_bound gives, per (tag, class), the flow-seconds
 * during which a flow of that tag was held by a limit of that class and
 * the bytes it moved meanwhile. Time at rate 0 (waiting for its solve)
 * counts nowhere; flows whose tag or class is outside the table are not
 * counted. The knowledge costs a few stores per freeze. */
int flow_res_set_class(flow_net *net, uint32_t res, uint8_t cls); /* 0 or SIM_EINVAL */
/* The class flow_res_set_class gave res (0 unless set, or when res is out of range). */
uint8_t flow_res_class(const flow_net *net, uint32_t res);
/* Sizes the table (zeroed) to ntags x nclasses: 0, SIM_EINVAL (0 of
 * either) or SIM_ENOMEM. */
int flow_bound_init(flow_net *net, uint32_t ntags, uint32_t nclasses);
/* Counts the time of the flows still running up to now, so that flow_bound
 * is complete as of now. O(flows). */
void flow_bound_flush(flow_net *net);
/* Flow-seconds and bytes of tag's flows held by a limit of class cls (0, 0
 * outside the table). */
void flow_bound(const flow_net *net, uint32_t tag, uint32_t cls, double *flow_s,
		double *bytes);
/* Flow-seconds and bytes of tag's flows that have a cap of their own,
 * whatever held them: bytes / (cap x flow-seconds) is how busy the limit
 * the cap stands for was while they ran (0, 0 outside the table). */
void flow_capped(const flow_net *net, uint32_t tag, double *flow_s, double *bytes);

/* Incremental re-solves (on by default, see the top): the flows a change
 * cannot move keep their rates, which a whole re-solve of their component
 * gives them too, but for the last bits of rounding (the two take each
 * resource's capacity off in different orders). Off: every change
 * re-solves its whole component, for tests and benchmarks that compare
 * the two. */
void flow_net_set_incremental(flow_net *net, bool on);

/* An incremental re-solve fills only the resources its flows load to
 * within 1e-7 of their capacity, and those the new rates would; a resource
 * with more room can hold no flow, so the rates, times and bounds are
 * those of filling every resource it walks, to the bit, for a fraction of
 * the work where long paths (a ring's step) cross many links with room
 * (on by default). Off: every resource walked is filled, for tests that
 * compare the two. */
void flow_net_set_lazy_fill(flow_net *net, bool on);

/* Debug check of the solution now (call it when no solve is pending, e.g.
 * from an event after the changes of an instant): no resource above its
 * capacity, every flow's rate positive, and every flow either at its cap
 * or crossing a saturated resource on which no flow is faster (the
 * definition of max-min fairness). Returns 0, or SIM_ERANGE with a
 * description in msg (n bytes). Relative tolerance 1e-9. */
int flow_net_check(const flow_net *net, char *msg, size_t n);

#endif
