/**
 * @file opt/graph_attention.h
 * Twins: ref_graph_attention_edges_forward(), ref_graph_attention_edges_backward() (ref/nn/graph_attention.h).
 * @brief GAT's edge work with the targets split across OpenMP threads, and a backward that
 *        gathers over the graph's transpose instead of scattering; **bitwise equal** to the reference.
 *
 * What changes and why it is still equal:
 *  - Forward: every target's softmax and aggregation is independent of the others, so the
 *    targets are dealt to threads and each runs the reference's own row function
 *    (graph_attention_row_forward()): the same operations in the same order.
 *  - Backward: the score gradients are per target too (graph_attention_row_score_gradients(), in
 *    parallel). The scatter of alpha dout_i into each source's row is the part that would race
 *    across threads; here each source j gathers its contributions over the transpose
 *    (propagation_add_transpose(): its out-edges ordered by destination, then CSR position), and
 *    inserts its added self-loop where the reference's scatter adds it (when the destinations
 *    reach j): each sum gets the same terms in the same order. Without a transpose (an operator
 *    nobody prepared) it runs the reference.
 */
#ifndef TWOFOLD_OPT_GRAPH_ATTENTION_H
#define TWOFOLD_OPT_GRAPH_ATTENTION_H

#include "ref/nn/graph_attention.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Twin of ref_graph_attention_edges_forward(); same arguments and shapes. */
void opt_graph_attention_edges_forward(const propagation *p, const float *projected, const float *attention_source,
                                       const float *attention_target, int64_t heads, int64_t channels,
                                       float *score_source, float *score_target, float *alpha, float *out);

/** Twin of ref_graph_attention_edges_backward(); same arguments and shapes. */
void opt_graph_attention_edges_backward(const propagation *p, const float *projected, const float *attention_source,
                                        const float *attention_target, const float *score_source,
                                        const float *score_target, const float *alpha, const float *dout,
                                        int64_t heads, int64_t channels, float *scratch, float *dprojected,
                                        float *dattention_source, float *dattention_target);

#ifdef __cplusplus
}
#endif

#endif
