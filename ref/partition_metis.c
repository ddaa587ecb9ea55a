/* METIS through libmetis (Karypis and Kumar, 1998): k-way partitioning of the union graph. Kept in
 * its own file so the one dependency on metis.h sits in one place. Checked against Debian's
 * libmetis-dev 5.1.0 (idx_t = int32_t): nparts = 1 divides by zero inside METIS (SIGFPE), and
 * nparts > nvtxs returns METIS_OK with every vertex on the last part; both are handled here. */
#include <metis.h>
#include <stdlib.h>
#include <string.h>

#include "ref/core/memory.h"
#include "ref/partition.h"

static int fits_idx(int64_t value) { return value >= 0 && value <= (int64_t)INT32_MAX; }

int partition_metis(const partition_graph *g, int ranks, uint64_t seed, int32_t *owner, int64_t *edge_cut,
                    tf_error *err)
{
    const int64_t vertices = g->num_vertices;
    if (edge_cut)
        *edge_cut = 0;
    if (ranks < 1)
        return tf_error_set(err, TF_ERR_INPUT, "METIS into %d parts, expected >= 1", ranks);
    if (ranks > vertices)
        return tf_error_set(err, TF_ERR_INPUT, "METIS cannot split %lld vertices into %d parts", (long long)vertices,
                            ranks);
    if (ranks == 1) {
        memset(owner, 0, (size_t)vertices * sizeof *owner);
        return TF_OK;
    }
    if (!fits_idx(vertices) || !fits_idx(g->num_edges))
        return tf_error_set(err, TF_ERR_INPUT, "METIS graph of %lld vertices and %lld edge entries: more than its "
                                               "32-bit idx_t holds",
                            (long long)vertices, (long long)g->num_edges);
    for (int64_t v = 0; v < vertices; v++)
        if (!fits_idx(g->vertex_weight[v]))
            return tf_error_set(err, TF_ERR_INPUT, "METIS vertex %lld weighs %lld: more than its 32-bit idx_t holds",
                                (long long)v, (long long)g->vertex_weight[v]);
    for (int64_t e = 0; e < g->num_edges; e++)
        if (!fits_idx(g->edge_weight[e]))
            return tf_error_set(err, TF_ERR_INPUT, "METIS edge weight %lld: more than its 32-bit idx_t holds",
                                (long long)g->edge_weight[e]);
    idx_t *xadj = tf_alloc((size_t)vertices + 1, sizeof *xadj, "METIS input", err);
    idx_t *adjncy = xadj ? tf_alloc((size_t)g->num_edges, sizeof *adjncy, "METIS input", err) : NULL;
    idx_t *adjwgt = adjncy ? tf_alloc((size_t)g->num_edges, sizeof *adjwgt, "METIS input", err) : NULL;
    idx_t *vwgt = adjwgt ? tf_alloc((size_t)vertices, sizeof *vwgt, "METIS input", err) : NULL;
    idx_t *part = vwgt ? tf_alloc((size_t)vertices, sizeof *part, "METIS output", err) : NULL;
    int status = part ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        for (int64_t v = 0; v <= vertices; v++)
            xadj[v] = (idx_t)g->offsets[v];
        for (int64_t e = 0; e < g->num_edges; e++) {
            adjncy[e] = g->neighbours[e];
            adjwgt[e] = (idx_t)g->edge_weight[e];
        }
        for (int64_t v = 0; v < vertices; v++)
            vwgt[v] = (idx_t)g->vertex_weight[v];
        idx_t options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_SEED] = (idx_t)(seed & 0x7fffffff);
        options[METIS_OPTION_NUMBERING] = 0;
        idx_t nvtxs = (idx_t)vertices, ncon = 1, nparts = ranks, cut = 0;
        int result = METIS_PartGraphKway(&nvtxs, &ncon, xadj, adjncy, vwgt, NULL, adjwgt, &nparts, NULL, NULL, options,
                                         &cut, part);
        if (result != METIS_OK)
            status = tf_error_set(err, result == METIS_ERROR_MEMORY ? TF_ERR_INPUT : TF_ERR_SYSTEM,
                                  "METIS_PartGraphKway failed with code %d (%s)", result,
                                  result == METIS_ERROR_INPUT    ? "bad input"
                                  : result == METIS_ERROR_MEMORY ? "out of memory"
                                                                 : "error");
        for (int64_t v = 0; status == TF_OK && v < vertices; v++)
            owner[v] = part[v];
        if (status == TF_OK && edge_cut)
            *edge_cut = cut;
    }
    free(xadj);
    free(adjncy);
    free(adjwgt);
    free(vwgt);
    free(part);
    return status;
}
