/* One rank's share of a sequence (opt/partition_part.h), every rank built side by side in one
 * process: local products against the whole graph's rows (bitwise), the negative test of local
 * degrees, cache mode's forward against the whole model (bitwise) with its loss and gradients
 * summed over ranks (fp), the cache depth shown tight, the two-layer models' halo's halo counted by
 * hand, the stacked models in cache mode, and T-GCN's cached inputs. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "opt/kernels.h"
#include "opt/partition_part.h"
#include "ref/nn/layers.h"
#include "ref/core/memory.h"
#include "ref/partition.h"
#include "verify/partition_example.h"
#include "verify/testing.h"

static const char spec[] = "powerlaw:nodes=150,edges=900,snapshots=8,arrival=0.05,seed=7";

/* Owners of method m at R ranks. */
static int32_t *owners_of(const snapshot_seq *seq, partition_method m, int ranks)
{
    partition_options o;
    partition_options_default(&o);
    o.ranks = ranks;
    partition p;
    tf_error err;
    ck_assert_msg(ref_partition_snapshots(seq, m, &o, &p, &err) == TF_OK, "%s", err.message);
    int32_t *owner = p.vertex_owner;
    p.vertex_owner = NULL;
    partition_free(&p);
    return owner;
}

/* A deterministic input [n][width]. */
static void fill(float *x, int64_t count, int seed)
{
    for (int64_t i = 0; i < count; i++)
        x[i] = (float)sin(0.37 * (double)i + seed) + 0.25f;
}

static const partition_method methods[] = {PARTITION_HASH, PARTITION_METIS, PARTITION_DYNAHB};

START_TEST(local_product_bitwise)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(spec, &d);
    const int64_t n = seq->num_nodes, width = 3;
    const int ranks = 3;
    tf_error err;
    float *x = malloc((size_t)(n * width) * sizeof *x), *global = malloc((size_t)(n * width) * sizeof *global);
    float *dy = malloc((size_t)(n * width) * sizeof *dy), *dx_global = malloc((size_t)(n * width) * sizeof *dx_global);
    float *dx_summed = malloc((size_t)(n * width) * sizeof *dx_summed);
    fill(x, n * width, 1);
    fill(dy, n * width, 2);
    for (int kind = 0; kind < 2; kind++) {
        const model_kind model = kind == 0 ? MODEL_TGCN : MODEL_GCLSTM; /* GCN and Chebyshev operators */
        const model_config config = {model, seq->feature_width, 4, seq->target_width, 2, 0};
        partition_operators ops;
        ck_assert_int_eq(partition_operators_create(&ops, seq, model, &err), TF_OK);
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
            int32_t *owner = owners_of(seq, methods[m], ranks);
            int64_t differing = 0, compared = 0, halo_total = 0;
            double worst_backward = 0;
            partition_part parts[3];
            for (int r = 0; r < ranks; r++)
                ck_assert_msg(partition_part_create(&parts[r], seq, &ops, owner, ranks, r, PARTITION_EXCHANGE, &config, 4,
                                                    &err) == TF_OK,
                              "%s", err.message);
            for (int64_t t = 0; t < seq->num_snapshots; t++) {
                ref_propagate_forward(&ops.whole[t], x, width, global);
                memset(dx_global, 0, (size_t)(n * width) * sizeof(float));
                ck_assert_int_eq(propagation_add_transpose(&ops.whole[t], &err), TF_OK);
                opt_propagate_backward(&ops.whole[t], dy, width, dx_global);
                memset(dx_summed, 0, (size_t)(n * width) * sizeof(float));
                for (int r = 0; r < ranks; r++) {
                    const partition_part *part = &parts[r];
                    const int64_t rows = part->operator_rows[t];
                    float *ext = calloc((size_t)(rows * width), sizeof *ext), *out = calloc((size_t)(rows * width), sizeof *out);
                    float *ext_dy = calloc((size_t)(rows * width), sizeof *ext_dy);
                    float *ext_dx = calloc((size_t)(rows * width), sizeof *ext_dx);
                    for (int64_t i = 0; i < rows; i++) { /* owned rows, then the halo filled from the global x */
                        const int32_t v = i < part->owned ? part->global_id[i] : part->halo_vertices[t][i - part->owned];
                        memcpy(ext + i * width, x + (int64_t)v * width, (size_t)width * sizeof(float));
                        if (i < part->owned)
                            memcpy(ext_dy + i * width, dy + (int64_t)v * width, (size_t)width * sizeof(float));
                    }
                    propagation view;
                    memset(&view, 0, sizeof view);
                    view.graph = &part->graphs[t];
                    view.edge_coefficient = part->edge_coefficient[t];
                    view.self_coefficient = part->self_coefficient[t];
                    opt_propagate_forward(&view, ext, width, out);
                    ref_propagate_backward(&view, ext_dy, width, ext_dx);
                    for (int64_t i = 0; i < part->owned; i++)
                        differing += differing_values(out + i * width, global + (int64_t)part->global_id[i] * width, width);
                    for (int64_t i = 0; i < rows; i++) { /* halo contributions go to their owners */
                        const int32_t v = i < part->owned ? part->global_id[i] : part->halo_vertices[t][i - part->owned];
                        for (int64_t j = 0; j < width; j++)
                            dx_summed[(int64_t)v * width + j] += ext_dx[i * width + j];
                    }
                    compared += part->owned * width;
                    halo_total += part->halo[t];
                    free(ext);
                    free(out);
                    free(ext_dy);
                    free(ext_dx);
                }
                worst_backward = fmax(worst_backward, relative_error(dx_summed, dx_global, n * width));
            }
            printf("local_product_bitwise: %s operator, %s on %d ranks: %lld owned values over %lld snapshots, %lld "
                   "differ (must be 0); %lld halo rows; backward summed at the owners: worst error %.2e\n",
                   kind == 0 ? "GCN" : "Chebyshev", partition_method_name(methods[m]), ranks, (long long)compared,
                   (long long)seq->num_snapshots, (long long)differing, (long long)halo_total, worst_backward);
            ck_assert_int_eq(differing, 0);
            ck_assert(worst_backward <= 1e-5);
            for (int r = 0; r < ranks; r++)
                partition_part_free(&parts[r]);
            free(owner);
        }
        partition_operators_free(&ops);
    }
    free(x);
    free(global);
    free(dy);
    free(dx_global);
    free(dx_summed);
    dataset_free(&d);
}
END_TEST

START_TEST(local_degrees_fail)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(spec, &d);
    const int64_t n = seq->num_nodes, width = 2;
    const int ranks = 3;
    tf_error err;
    const model_config config = {MODEL_TGCN, seq->feature_width, 4, seq->target_width, 2, 0};
    partition_operators ops;
    ck_assert_int_eq(partition_operators_create(&ops, seq, MODEL_TGCN, &err), TF_OK);
    int32_t *owner = owners_of(seq, PARTITION_HASH, ranks);
    float *x = malloc((size_t)(n * width) * sizeof *x), *global = malloc((size_t)(n * width) * sizeof *global);
    fill(x, n * width, 3);
    int64_t spoiled = 0, rows_seen = 0;
    for (int r = 0; r < ranks; r++) {
        partition_part part;
        ck_assert_int_eq(partition_part_create(&part, seq, &ops, owner, ranks, r, PARTITION_EXCHANGE, &config, 4, &err),
                         TF_OK);
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            ref_propagate_forward(&ops.whole[t], x, width, global);
            const int64_t rows = part.operator_rows[t];
            float *ext = calloc((size_t)(rows * width), sizeof *ext), *out = calloc((size_t)(rows * width), sizeof *out);
            for (int64_t i = 0; i < rows; i++) {
                const int32_t v = i < part.owned ? part.global_id[i] : part.halo_vertices[t][i - part.owned];
                memcpy(ext + i * width, x + (int64_t)v * width, (size_t)width * sizeof(float));
            }
            propagation local; /* the mistake: normalized by the local graph's own degrees */
            ck_assert_int_eq(ref_propagation_gcn(&local, &part.graphs[t], EDGE_NORM_SYMMETRIC, 1, &err), TF_OK);
            ref_propagate_forward(&local, ext, width, out);
            for (int64_t i = 0; i < part.owned; i++)
                spoiled += differing_values(out + i * width, global + (int64_t)part.global_id[i] * width, width) > 0;
            rows_seen += part.owned;
            ref_propagation_free(&local);
            free(ext);
            free(out);
        }
        partition_part_free(&part);
    }
    printf("local_degrees_fail: GCN coefficients from each part's own graph spoil %lld of %lld owned rows (the whole "
           "graph's degrees spoil none: local_product_bitwise)\n",
           (long long)spoiled, (long long)rows_seen);
    ck_assert_int_gt(spoiled, 0);
    free(owner);
    free(x);
    free(global);
    partition_operators_free(&ops);
    dataset_free(&d);
}
END_TEST

/* The whole model's forward, loss (mean over the window, MSE over present rows) and gradients. */
typedef struct whole_run {
    float *predictions;  /* [count][N][out] */
    double loss;
    float *gradients;    /* [parameter count] */
} whole_run;

static void run_whole(const snapshot_seq *seq, const model_config *config, int64_t first, int64_t count, whole_run *out)
{
    model m;
    tf_error err;
    ck_assert_int_eq(model_create(&m, config, 5, &err), TF_OK);
    const int64_t size = count * seq->num_nodes * seq->target_width;
    out->predictions = malloc((size_t)size * sizeof(float));
    float *dpredictions = malloc((size_t)size * sizeof(float));
    window_tape tape;
    ck_assert_int_eq(model_forward(&m, seq, first, count, &tape, out->predictions, &err), TF_OK);
    out->loss = model_window_loss(seq, first, count, out->predictions, 1.0f, dpredictions);
    ck_assert_int_eq(model_backward(&m, seq, &tape, dpredictions, &err), TF_OK);
    out->gradients = malloc((size_t)parameters_size(&m.parameters) * sizeof(float));
    parameters_pack_gradients(&m.parameters, out->gradients);
    window_tape_free(&m, &tape);
    model_free(&m);
    free(dpredictions);
}

/* Cache mode on every rank: owned predictions against the whole model's (bitwise), the loss and the
 * gradients summed over ranks (fp). The parts are built for `built_for` (the model's own config, or a
 * shallower model's to show its cache too shallow) and `depth_window` (the window length the part is
 * built for): together they set the cache depth. @return the owned predictions that differ. */
static int64_t cache_run(const snapshot_seq *seq, const model_config *config, const model_config *built_for,
                         const int32_t *owner, int ranks, int64_t first, int64_t count, int64_t depth_window,
                         const whole_run *whole, double *loss_error, double *gradient_error, double *replication)
{
    tf_error err;
    const int64_t out = seq->target_width;
    partition_operators ops;
    ck_assert_int_eq(partition_operators_create(&ops, seq, config->kind, &err), TF_OK);
    model m;
    ck_assert_int_eq(model_create(&m, config, 5, &err), TF_OK);
    const int64_t parameters = parameters_size(&m.parameters);
    float *summed = calloc((size_t)parameters, sizeof *summed), *mine = malloc((size_t)parameters * sizeof *mine);
    double loss = 0;
    int64_t differing = 0, held = 0;
    for (int r = 0; r < ranks; r++) {
        partition_part part;
        ck_assert_msg(partition_part_create(&part, seq, &ops, owner, ranks, r, PARTITION_CACHE, built_for,
                                            depth_window, &err) == TF_OK,
                      "%s", err.message);
        held += part.rows + part.cached;
        partition_part_attach(&part, &m);
        parameters_zero_grad(&m.parameters);
        const int64_t per_step = part.rows * out;
        float *predictions = malloc((size_t)(count * per_step + 1) * sizeof(float));
        float *dpredictions = calloc((size_t)(count * per_step + 1), sizeof(float));
        window_tape tape;
        ck_assert_msg(model_forward(&m, &part.local, first, count, &tape, predictions, &err) == TF_OK, "%s", err.message);
        for (int64_t t = 0; t < count; t++) {
            const snapshot *s = &part.local.snapshots[first + t];
            loss += ref_mse_loss_over(predictions + t * per_step, s->targets.data, s->present, part.owned, out,
                                      part.present_total[first + t], 1.0f / (float)count, dpredictions + t * per_step) /
                    (double)count;
            for (int64_t i = 0; i < part.owned; i++)
                differing += differing_values(predictions + t * per_step + i * out,
                                              whole->predictions + (t * seq->num_nodes + part.global_id[i]) * out, out);
        }
        ck_assert_int_eq(model_backward(&m, &part.local, &tape, dpredictions, &err), TF_OK);
        parameters_pack_gradients(&m.parameters, mine);
        for (int64_t i = 0; i < parameters; i++)
            summed[i] += mine[i];
        window_tape_free(&m, &tape);
        free(predictions);
        free(dpredictions);
        m.operators = NULL;
        m.inputs = NULL;
        partition_part_free(&part);
    }
    *loss_error = fabs(loss - whole->loss) / fmax(1.0, fabs(whole->loss));
    *gradient_error = relative_error(summed, whole->gradients, parameters);
    *replication = (double)held / (double)seq->num_nodes;
    free(summed);
    free(mine);
    model_free(&m);
    partition_operators_free(&ops);
    return differing;
}

START_TEST(cache_forward_bitwise)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(spec, &d);
    const model_kind kinds[] = {MODEL_TGCN, MODEL_GCLSTM, MODEL_EVOLVEGCN, MODEL_GCONVGRU};
    const int64_t first = 2, count = 3;
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        const model_config config = {kinds[k], seq->feature_width, 4, seq->target_width, 2, 0};
        whole_run whole;
        run_whole(seq, &config, first, count, &whole);
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++) {
            int32_t *owner = owners_of(seq, methods[m], 3);
            double loss_error, gradient_error, replication;
            const int64_t differing =
                cache_run(seq, &config, &config, owner, 3, first, count, count, &whole, &loss_error, &gradient_error,
                          &replication);
            printf("cache_forward_bitwise: %-9s %-6s 3 ranks, window %lld (depth %d): owned predictions differing %lld "
                   "(must be 0); loss %.2e, gradients %.2e; rows held / N %.2f\n",
                   model_kind_name(kinds[k]), partition_method_name(methods[m]), (long long)count,
                   partition_cache_depth(&config, count), (long long)differing, loss_error, gradient_error, replication);
            ck_assert_int_eq(differing, 0);
            ck_assert(loss_error <= 1e-5 && gradient_error <= 1e-5);
            free(owner);
        }
        free(whole.predictions);
        free(whole.gradients);
    }
    dataset_free(&d);
}
END_TEST

START_TEST(cache_depth_tight)
{
    /* A path 0 -> 1 -> ... -> 39 in every snapshot: GC-LSTM's H_4 at vertex v reads H_1 three hops
     * upstream, so a cache one hop short must change some owned prediction. */
    const int64_t n = 40, steps = 6;
    snapshot_seq seq;
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(&seq, steps, n, 2, 1, &err), TF_OK);
    int32_t src[39], dst[39];
    for (int i = 0; i < 39; i++)
        src[i] = i, dst[i] = i + 1;
    for (int64_t t = 0; t < steps; t++) {
        ck_assert_int_eq(snapshot_seq_set_edges(&seq, t, 39, src, dst, NULL, &err), TF_OK);
        fill(seq.snapshots[t].features.data, n * 2, (int)t);
        fill(seq.snapshots[t].targets.data, n, (int)t + 9);
    }
    const model_config config = {MODEL_GCLSTM, 2, 4, 1, 2, 0};
    int32_t owner[40];
    partition_range(n, 4, owner);
    const int64_t first = 0, count = 4;
    whole_run whole;
    run_whole(&seq, &config, first, count, &whole);
    double loss_error, gradient_error, replication;
    const int64_t exact = cache_run(&seq, &config, &config, owner, 4, first, count, count, &whole, &loss_error,
                                    &gradient_error, &replication);
    const int64_t short_by_one = cache_run(&seq, &config, &config, owner, 4, first, count, count - 1, &whole,
                                           &loss_error, &gradient_error, &replication);
    printf("cache_depth_tight: GC-LSTM K = 2, window 4 on a path: depth %d leaves %lld owned predictions differing, "
           "depth %d leaves %lld\n",
           partition_cache_depth(&config, count), (long long)exact, partition_cache_depth(&config, count - 1),
           (long long)short_by_one);
    ck_assert_int_eq(exact, 0);
    ck_assert_int_gt(short_by_one, 0);
    free(whole.predictions);
    free(whole.gradients);
    snapshot_seq_free(&seq);
}
END_TEST

/* The halo's halo of the models with two graph layers per snapshot (chapter 06). On the undirected
 * path 0 - 1 - ... - 11 split in ranges over 3 ranks (0-3, 4-7, 8-11), counted here by hand: a cache
 * of two hops holds rank 0's 4, 5, rank 1's 2, 3, 8, 9 and rank 2's 6, 7 beyond the owned rows (6, 8
 * and 6 rows), where one hop holds 4, 3 and 8, 7 (5, 6 and 5). The two-layer T-GCN's owned predictions
 * are bitwise the whole graph's with two hops and not with one. */
START_TEST(two_hop_halos)
{
    const int64_t n = 12, steps = 4, first = 0, count = 3;
    snapshot_seq seq;
    tf_error err;
    ck_assert_int_eq(snapshot_seq_alloc(&seq, steps, n, 2, 1, &err), TF_OK);
    int32_t src[22], dst[22];
    for (int i = 0; i < 11; i++)
        src[2 * i] = i, dst[2 * i] = i + 1, src[2 * i + 1] = i + 1, dst[2 * i + 1] = i;
    for (int64_t t = 0; t < steps; t++) {
        ck_assert_int_eq(snapshot_seq_set_edges(&seq, t, 22, src, dst, NULL, &err), TF_OK);
        fill(seq.snapshots[t].features.data, n * 2, (int)t);
        fill(seq.snapshots[t].targets.data, n, (int)t + 9);
    }
    /* one hop held as rows: EvolveGCN-O (WD-GCN, also one hop, now keeps its halo as cached features) */
    const model_config two = {MODEL_TGCN2, 2, 4, 1, 2, 0}, one = {MODEL_EVOLVEGCN, 2, 4, 1, 2, 0};
    const int64_t by_hand[2][3] = {{6, 8, 6}, {5, 6, 5}}; /* rows held per rank: two hops, one hop */
    int32_t owner[12];
    partition_range(n, 3, owner);
    partition_operators ops;
    ck_assert_int_eq(partition_operators_create(&ops, &seq, MODEL_TGCN2, &err), TF_OK);
    for (int hops = 0; hops < 2; hops++)
        for (int r = 0; r < 3; r++) {
            partition_part part;
            ck_assert_int_eq(partition_part_create(&part, &seq, &ops, owner, 3, r, PARTITION_CACHE, hops ? &one : &two,
                                                   count, &err), TF_OK);
            printf("two_hop_halos: %s, rank %d: %lld rows held (%lld owned), by hand %lld\n", hops ? "one hop" : "two hops",
                   r, (long long)part.rows, (long long)part.owned, (long long)by_hand[hops][r]);
            ck_assert_int_eq(part.rows, by_hand[hops][r]);
            partition_part_free(&part);
        }
    partition_operators_free(&ops);
    whole_run whole;
    run_whole(&seq, &two, first, count, &whole);
    double loss_error, gradient_error, replication;
    const int64_t exact = cache_run(&seq, &two, &two, owner, 3, first, count, count, &whole, &loss_error,
                                    &gradient_error, &replication);
    ck_assert(loss_error <= 1e-5 && gradient_error <= 1e-5);
    const int64_t shallow = cache_run(&seq, &two, &one, owner, 3, first, count, count, &whole, &loss_error,
                                      &gradient_error, &replication);
    printf("two_hop_halos: two-layer T-GCN, window 3: %lld owned predictions differ with two hops, %lld with one\n",
           (long long)exact, (long long)shallow);
    ck_assert_int_eq(exact, 0);
    ck_assert_int_gt(shallow, 0);
    free(whole.predictions);
    free(whole.gradients);
    snapshot_seq_free(&seq);
}
END_TEST

/* The models whose parts follow the graph layers they stack (two GCN layers, pairs, GConvLSTM's
 * convolutions of H) in cache mode on one partitioner: owned predictions bitwise, loss and gradients
 * summed over ranks (fp). On a sparser graph than the others', so that a rank's cache of two or three
 * hops still leaves vertices out (rows held / N well under 3). */
START_TEST(cache_stacked_models)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots("powerlaw:nodes=300,edges=330,snapshots=6,arrival=0.05,seed=7", &d);
    const model_kind kinds[] = {MODEL_TGCN2, MODEL_MPNNLSTM, MODEL_GCRNM1, MODEL_CDGCN, MODEL_DCRNN, MODEL_GCONVLSTM};
    const int64_t first = 2, count = test_repeats(3, 1); /* memcheck: every model's path once */
    int32_t *owner = owners_of(seq, PARTITION_DYNAHB, 3);
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        const model_config config = {kinds[k], seq->feature_width, 4, seq->target_width, 2, 0};
        whole_run whole;
        run_whole(seq, &config, first, count, &whole);
        double loss_error, gradient_error, replication;
        const int64_t differing = cache_run(seq, &config, &config, owner, 3, first, count, count, &whole, &loss_error,
                                            &gradient_error, &replication);
        printf("cache_stacked_models: %-9s dynahb 3 ranks, window %lld (depth %d): owned predictions differing %lld "
               "(must be 0); loss %.2e, gradients %.2e; rows held / N %.2f\n",
               model_kind_name(kinds[k]), (long long)count, partition_cache_depth(&config, count),
               (long long)differing, loss_error, gradient_error, replication);
        ck_assert_int_eq(differing, 0);
        ck_assert(loss_error <= 1e-5 && gradient_error <= 1e-5);
        free(whole.predictions);
        free(whole.gradients);
    }
    free(owner);
    dataset_free(&d);
}
END_TEST

/* Chapter 06b's worked product: the example of verify/partition_example.h split as DGC's chunks split it
 * ({0, 1, 4, 5} on rank 0, {2, 3, 6, 7} on rank 1; METIS makes the same two groups), in exchange
 * mode, GCN operator. At t = 0 rank 0's halo is vertex 2 alone (the edge 2 -> 1); vertices 1, 5 and
 * 2 each have two in-edges, so with the self loop every coefficient of row 1 is 1/3 and
 * y_1 = (x_1 + x_5 + x_2) / 3 = (2 + 6 + 3) / 3.
 * Backward with dy = 1 on every row: rank 0 hands dx_2 = 1/3 back to rank 1, which adds its own
 * 1/3 (the self loop): 2/3, the whole graph's. */
START_TEST(worked_exchange_product)
{
    snapshot_seq seq;
    example_sequence(&seq);
    const int32_t owner[EXAMPLE_VERTICES] = {0, 0, 1, 1, 0, 0, 1, 1};
    const model_config config = {MODEL_TGCN, 1, 4, 1, 2, 0};
    tf_error err;
    partition_operators ops;
    ck_assert_int_eq(partition_operators_create(&ops, &seq, MODEL_TGCN, &err), TF_OK);
    partition_part parts[2];
    for (int r = 0; r < 2; r++)
        ck_assert_msg(partition_part_create(&parts[r], &seq, &ops, owner, 2, r, PARTITION_EXCHANGE, &config, 2, &err) ==
                          TF_OK,
                      "%s", err.message);
    printf("worked_exchange_product: halo rows of rank 0: t = 0 {%d}, t = 1 {%d}; of rank 1: %lld and %lld\n",
           parts[0].halo[0] == 1 ? parts[0].halo_vertices[0][0] : -1,
           parts[0].halo[1] == 1 ? parts[0].halo_vertices[1][0] : -1, (long long)parts[1].halo[0],
           (long long)parts[1].halo[1]);
    ck_assert(parts[0].halo[0] == 1 && parts[0].halo_vertices[0][0] == 2);
    ck_assert(parts[0].halo[1] == 1 && parts[0].halo_vertices[1][0] == 3);
    ck_assert(parts[1].halo[0] == 0 && parts[1].halo[1] == 0);

    /* Rank 0 at t = 0: rows 0, 1, 4, 5 owned, then the fetched row of vertex 2. */
    float x[EXAMPLE_VERTICES], whole_y[EXAMPLE_VERTICES], ones[EXAMPLE_VERTICES], whole_dx[EXAMPLE_VERTICES] = {0};
    for (int v = 0; v < EXAMPLE_VERTICES; v++) {
        x[v] = seq.snapshots[0].features.data[v];
        ones[v] = 1.0f;
    }
    ref_propagate_forward(&ops.whole[0], x, 1, whole_y);
    ck_assert_int_eq(propagation_add_transpose(&ops.whole[0], &err), TF_OK);
    ref_propagate_backward(&ops.whole[0], ones, 1, whole_dx);
    float summed_dx[EXAMPLE_VERTICES] = {0}, y_1 = 0, returned = 0;
    for (int r = 0; r < 2; r++) {
        const partition_part *part = &parts[r];
        const int64_t rows = part->operator_rows[0];
        float ext[EXAMPLE_VERTICES + 1] = {0}, out[EXAMPLE_VERTICES + 1] = {0};
        float ext_dy[EXAMPLE_VERTICES + 1] = {0}, ext_dx[EXAMPLE_VERTICES + 1] = {0};
        for (int64_t i = 0; i < rows; i++) {
            const int32_t v = i < part->owned ? part->global_id[i] : part->halo_vertices[0][i - part->owned];
            ext[i] = x[v];
            ext_dy[i] = i < part->owned ? 1.0f : 0.0f;
        }
        propagation view;
        memset(&view, 0, sizeof view);
        view.graph = &part->graphs[0];
        view.edge_coefficient = part->edge_coefficient[0];
        view.self_coefficient = part->self_coefficient[0];
        ref_propagate_forward(&view, ext, 1, out);
        ref_propagate_backward(&view, ext_dy, 1, ext_dx);
        for (int64_t i = 0; i < rows; i++) {
            const int32_t v = i < part->owned ? part->global_id[i] : part->halo_vertices[0][i - part->owned];
            summed_dx[v] += ext_dx[i];
            if (r == 0 && i < part->owned && v == 1)
                y_1 = out[i];
            if (r == 0 && i >= part->owned)
                returned = ext_dx[i];
            if (i < part->owned)
                ck_assert_msg(out[i] == whole_y[v], "rank %d row of vertex %d differs from the whole graph's", r, v);
        }
    }
    printf("worked_exchange_product: rank 0, t = 0: y_1 = (x_1 + x_5 + x_2) / 3 = %.6f (whole graph %.6f); "
           "dx_2 handed back %.6f, summed at rank 1 %.6f (whole graph %.6f)\n",
           y_1, whole_y[1], returned, summed_dx[2], whole_dx[2]);
    ck_assert(fabsf(y_1 - 11.0f / 3.0f) <= 1e-6f);
    ck_assert(fabsf(returned - 1.0f / 3.0f) <= 1e-6f);
    ck_assert(fabsf(summed_dx[2] - 2.0f / 3.0f) <= 1e-6f && fabsf(summed_dx[2] - whole_dx[2]) <= 1e-6f);
    for (int r = 0; r < 2; r++)
        partition_part_free(&parts[r]);
    partition_operators_free(&ops);
    snapshot_seq_free(&seq);
}
END_TEST

START_TEST(tgcn_cached_inputs)
{
    dataset d;
    const snapshot_seq *seq = load_snapshots(spec, &d);
    const int64_t n = seq->num_nodes, f = seq->feature_width;
    tf_error err;
    const model_config config = {MODEL_TGCN, f, 4, seq->target_width, 2, 0};
    partition_operators ops;
    ck_assert_int_eq(partition_operators_create(&ops, seq, MODEL_TGCN, &err), TF_OK);
    int32_t *owner = owners_of(seq, PARTITION_DYNAHB, 4);
    float *global = malloc((size_t)(n * f) * sizeof *global), *mine = malloc((size_t)(n * f) * sizeof *mine);
    int64_t differing = 0, cached = 0;
    for (int r = 0; r < 4; r++) {
        partition_part part;
        ck_assert_int_eq(partition_part_create(&part, seq, &ops, owner, 4, r, PARTITION_CACHE, &config, 4, &err), TF_OK);
        ck_assert_int_eq(part.rows, part.owned); /* no GRU on a cached row */
        cached += part.cached;
        for (int64_t t = 0; t < seq->num_snapshots; t++) {
            ref_propagate_forward(&ops.whole[t], seq->snapshots[t].features.data, f, global);
            ck_assert_int_eq(part.cached_inputs.get(part.cached_inputs.context, t, mine, &err), TF_OK);
            for (int64_t i = 0; i < part.owned; i++)
                differing += differing_values(mine + i * f, global + (int64_t)part.global_id[i] * f, f);
        }
        partition_part_free(&part);
    }
    printf("tgcn_cached_inputs: dynahb on 4 ranks: %lld cached neighbour rows in all; A^ X_t of the owned rows from the "
           "cache: %lld values differ from the whole graph's (must be 0)\n",
           (long long)cached, (long long)differing);
    ck_assert_int_eq(differing, 0);
    /* Bad input: an owner out of range. */
    owner[3] = 9;
    partition_part part;
    EXPECT_INPUT_ERROR(partition_part_create(&part, seq, &ops, owner, 4, 0, PARTITION_CACHE, &config, 4, &err), &err,
                       "vertex 3 has owner 9");
    free(owner);
    free(global);
    free(mine);
    partition_operators_free(&ops);
    dataset_free(&d);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("partition_part");
    const struct {
        const char *name;
        const TTest *test;
    } tests[] = {{"local_product_bitwise", local_product_bitwise},
                 {"local_degrees_fail", local_degrees_fail},
                 {"cache_forward_bitwise", cache_forward_bitwise},
                 {"cache_depth_tight", cache_depth_tight},
                 {"two_hop_halos", two_hop_halos},
                 {"cache_stacked_models", cache_stacked_models},
                 {"tgcn_cached_inputs", tgcn_cached_inputs},
                 {"worked_exchange_product", worked_exchange_product}};
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        TCase *single = tcase_create(tests[i].name);
        tcase_set_timeout(single, 300);
        tcase_add_test(single, tests[i].test);
        suite_add_tcase(suite, single);
    }
    return run_suite(suite);
}
