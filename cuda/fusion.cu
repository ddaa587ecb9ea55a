#include "cuda/fusion.h"

#include <cuda_runtime.h>
#include <string.h>

#include "cuda/check.h"
#include "cuda/layers.h"
#include "ref/nn/recurrent_gates.h"

static const int threads_per_block = 256;
static unsigned blocks_for(int64_t count) { return (unsigned)((count + threads_per_block - 1) / threads_per_block); }

/* ---- moving rows between sequence order and plan order --------------------------------------- */

/* destination[row_of_step[i]] = source[i], rows of `width` floats */
__global__ static void scatter_rows(const float *source, const int64_t *row_of_step, int64_t count, int64_t width,
                                    float *destination)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= count * width)
        return;
    int64_t i = index / width, k = index % width;
    destination[row_of_step[i] * width + k] = source[index];
}

/* destination[i] (+)= source[row_of_step[i]] */
__global__ static void gather_rows(const float *source, const int64_t *row_of_step, int64_t count, int64_t width,
                                   int accumulate, float *destination)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= count * width)
        return;
    int64_t i = index / width, k = index % width;
    float value = source[row_of_step[i] * width + k];
    destination[index] = accumulate ? destination[index] + value : value;
}

/* ---- the fused masked steps -------------------------------------------------------------------- */

/* GRU step t over its n active lanes, one thread per (lane, unit). `input` and `recurrent` are
 * the step's rows of x W_ih^T + b_ih and h_prev W_hh^T + b_hh. Besides the new state, writes
 * the next step's carried state where that row exists and does not reset; a reset row keeps
 * the zero it was initialized with.
 *   input, recurrent        [n][3H]       this step's rows
 *   h_prev, h               [n][H]        the carried state and the new one
 *   cache                   [n][4H]       r, z, n, h_n per row (ref/nn/recurrent_gates.h)
 *   next_reset              [next_n]      the next step's reset flags (NULL at the last step)
 *   next_h_prev             [next_n][H]   the next step's carried state (NULL at the last step) */
__global__ static void masked_gru_step_forward(const float *input, const float *recurrent, const float *h_prev,
                                               int64_t n, int64_t H, int64_t next_n, const uint8_t *next_reset,
                                               float *h, float *cache, float *next_h_prev)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t l = index / H, j = index % H;
    const float *a = input + l * 3 * H + j, *b = recurrent + l * 3 * H + j;
    float state =
        gru_unit_forward(a[0], a[H], a[2 * H], b[0], b[H], b[2 * H], &h_prev[index], H, cache + l * 4 * H + j);
    h[index] = state;
    if (next_h_prev && l < next_n && !next_reset[l])
        next_h_prev[index] = state;
}

/* LSTM step t: `input` + `recurrent` are the pre-activations (i, f, g, o).
 *   input, recurrent, gates              [n][4H]
 *   c_prev, c, h                         [n][H]       the carried cell state, the new cell state and output
 *   next_reset                           [next_n]     (NULL at the last step)
 *   next_h_prev, next_c_prev             [next_n][H]  the next step's carried states (NULL at the last step) */
__global__ static void masked_lstm_step_forward(const float *input, const float *recurrent, const float *c_prev,
                                                int64_t n, int64_t H, int64_t next_n, const uint8_t *next_reset,
                                                float *c, float *h, float *gates, float *next_h_prev,
                                                float *next_c_prev)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t l = index / H, j = index % H;
    const float *a = input + l * 4 * H + j, *b = recurrent + l * 4 * H + j;
    float cell;
    float state = lstm_unit_forward(a[0] + b[0], a[H] + b[H], a[2 * H] + b[2 * H], a[3 * H] + b[3 * H], c_prev[index],
                                    H, gates + l * 4 * H + j, &cell);
    c[index] = cell;
    h[index] = state;
    if (next_h_prev && l < next_n && !next_reset[l]) {
        next_h_prev[index] = state;
        next_c_prev[index] = cell;
    }
}

/* GRU backward of step t: dL/dh = the loss's rows + what step t + 1 carried back; writes the
 * six pre-activation gradients and the direct term g z of dL/dh_prev.
 *   h_prev, dh, carry_h, dh_prev    [n][H]
 *   cache                           [n][4H]  the forward's r, z, n, h_n
 *   d_input, d_recurrent            [n][3H] */
__global__ static void masked_gru_step_backward(const float *h_prev, const float *cache, const float *dh,
                                                const float *carry_h, int64_t n, int64_t H, float *d_input,
                                                float *d_recurrent, float *dh_prev)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t l = index / H, j = index % H;
    float direct = -0.0f; /* x + -0 is x for every x, so this stores the term itself */
    gru_unit_backward(dh[index] + carry_h[index], h_prev[index], cache + l * 4 * H + j, H, d_input + l * 3 * H + j,
                      d_recurrent + l * 3 * H + j, &direct);
    dh_prev[index] = direct;
}

/* LSTM backward of step t: pre-activation gradients and dL/dc_prev.
 *   gates, d_preactivation                       [n][4H]
 *   c_prev, c, dh, carry_h, carry_c, dc_prev     [n][H] */
__global__ static void masked_lstm_step_backward(const float *gates, const float *c_prev, const float *c,
                                                 const float *dh, const float *carry_h, const float *carry_c,
                                                 int64_t n, int64_t H, float *d_preactivation, float *dc_prev)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t l = index / H, j = index % H;
    float through_cell = -0.0f; /* as in masked_gru_step_backward() */
    lstm_unit_backward(dh[index] + carry_h[index], carry_c[index], c_prev[index], c[index], gates + l * 4 * H + j, H,
                       d_preactivation + l * 4 * H + j, &through_cell);
    dc_prev[index] = through_cell;
}

/* Through the mask: at a reset the gradient belongs to the zero initial state and stops.
 *   dh_prev, dc_prev [n][H]   this step's dL/dh_prev, dL/dc_prev (dc_prev NULL for the GRU)
 *   reset [n]                 this step's reset flags
 *   carry_h, carry_c [n][H]   what the previous step receives */
__global__ static void masked_carry(const float *dh_prev, const float *dc_prev, const uint8_t *reset, int64_t n,
                                    int64_t H, float *carry_h, float *carry_c)
{
    int64_t index = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= n * H)
        return;
    int64_t l = index / H;
    carry_h[index] = reset[l] ? 0.0f : dh_prev[index];
    if (dc_prev)
        carry_c[index] = reset[l] ? 0.0f : dc_prev[index];
}

/* ---- host side ---------------------------------------------------------------------------------- */

extern "C" int cuda_fusion_plan_upload(cuda_context *context, const fusion_plan *plan, cuda_fusion_plan *out,
                                       tf_error *err)
{
    memset(out, 0, sizeof *out);
    if (plan->mask_rule != FUSION_MASK_EVERY_GATE)
        return tf_error_set(err, TF_ERR_INPUT, "cuda fusion: only the every-gate mask is implemented on the GPU");
    out->host = plan;
    out->d_reset = (uint8_t *)cuda_alloc(context, (size_t)plan->computed_rows, err);
    out->d_row_of_step = out->d_reset ? (int64_t *)cuda_alloc(context, (size_t)plan->useful_rows * sizeof(int64_t), err)
                                      : NULL;
    int status = out->d_row_of_step ? TF_OK : TF_ERR_SYSTEM;
    if (status == TF_OK)
        status = cuda_upload(context, out->d_reset, plan->reset, (size_t)plan->computed_rows, err);
    if (status == TF_OK)
        status = cuda_upload(context, out->d_row_of_step, plan->row_of_step,
                             (size_t)plan->useful_rows * sizeof(int64_t), err);
    if (status != TF_OK)
        cuda_fusion_plan_free(context, out);
    return status;
}

extern "C" void cuda_fusion_plan_free(cuda_context *context, cuda_fusion_plan *plan)
{
    cuda_free(context, plan->d_reset);
    cuda_free(context, plan->d_row_of_step);
    memset(plan, 0, sizeof *plan);
}

extern "C" void cuda_fusion_tape_free(cuda_context *context, cuda_fusion_tape *tape)
{
    void *buffers[] = {tape->d_x, tape->d_h_prev, tape->d_h, tape->d_c_prev, tape->d_c, tape->d_cache};
    cuda_free_each(context, buffers, sizeof buffers / sizeof buffers[0]);
    memset(tape, 0, sizeof *tape);
}

/* A zeroed device buffer of `count` floats, or NULL with err set. */
static float *zeroed(cuda_context *context, int64_t count, tf_error *err)
{
    float *buffer = (float *)cuda_alloc(context, (size_t)(count > 0 ? count : 1) * sizeof(float), err);
    if (buffer && cuda_check(cudaMemsetAsync(buffer, 0, (size_t)(count > 0 ? count : 1) * sizeof(float),
                                             (cudaStream_t)context->stream),
                             __FILE__, __LINE__, err) != TF_OK) {
        cuda_free(context, buffer);
        return NULL;
    }
    return buffer;
}

static int check_shapes(const time_encoder *encoder, const sequence_set *set, const cuda_fusion_plan *plan,
                        tf_error *err)
{
    if (time_encoder_check(encoder, err) != TF_OK)
        return err->code;
    if (encoder->kind != TIME_ENCODER_GRU && encoder->kind != TIME_ENCODER_LSTM)
        return tf_error_set(err, TF_ERR_INPUT, "cuda fusion: the GPU lanes run torch's GRU and LSTM only, not T-GCN's "
                                               "GRU or the LSTM with peepholes (opt/fusion.h runs those)");
    if (!plan->host || plan->host->useful_rows != set->total_steps)
        return tf_error_set(err, TF_ERR_INPUT, "cuda fusion: the plan was made for another sequence set");
    return TF_OK;
}

extern "C" int cuda_fusion_forward(cuda_context *context, const time_encoder *encoder, const sequence_set *set,
                                   const cuda_fusion_plan *plan, const float *d_x, float *d_h_out,
                                   cuda_fusion_tape *tape, tf_error *err)
{
    memset(tape, 0, sizeof *tape);
    if (check_shapes(encoder, set, plan, err) != TF_OK)
        return err->code;
    const fusion_plan *p = plan->host;
    const int lstm = encoder->kind == TIME_ENCODER_LSTM;
    const int64_t H = encoder->hidden, in = encoder->in, G = time_encoder_gates(encoder->kind);
    const int64_t rows = p->computed_rows, total = set->total_steps;
    cudaStream_t stream = (cudaStream_t)context->stream;
    tape->rows = rows;
    /* zeroed: padding rows' x, and the carried states of reset rows, stay 0 */
    tape->d_x = zeroed(context, rows * in, err);
    tape->d_h_prev = tape->d_x ? zeroed(context, rows * H, err) : NULL;
    tape->d_h = tape->d_h_prev ? zeroed(context, rows * H, err) : NULL;
    tape->d_cache = tape->d_h ? zeroed(context, rows * 4 * H, err) : NULL;
    if (tape->d_cache && lstm) {
        tape->d_c_prev = zeroed(context, rows * H, err);
        tape->d_c = tape->d_c_prev ? zeroed(context, rows * H, err) : NULL;
    }
    float *input = (tape->d_cache && (!lstm || tape->d_c)) ? zeroed(context, rows * G * H, err) : NULL;
    float *recurrent = input ? zeroed(context, p->active[0] * G * H, err) : NULL;
    int status = recurrent ? TF_OK : TF_ERR_SYSTEM;
    if (status == TF_OK && total * in > 0) {
        scatter_rows<<<blocks_for(total * in), threads_per_block, 0, stream>>>(d_x, plan->d_row_of_step, total, in,
                                                                                tape->d_x);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK) /* all steps' input products at once */
        status = cuda_linear_forward(context, tape->d_x, encoder->weight_ih, encoder->bias_ih, rows, in, G * H, input,
                                     err);
    for (int64_t t = 0; t < p->num_steps && status == TF_OK; t++) {
        const int64_t n = p->active[t], base = p->step_offset[t];
        const int last = t + 1 == p->num_steps;
        const int64_t next_n = last ? 0 : p->active[t + 1], next_base = last ? 0 : p->step_offset[t + 1];
        status = cuda_linear_forward(context, tape->d_h_prev + base * H, encoder->weight_hh, encoder->bias_hh, n, H,
                                     G * H, recurrent, err);
        if (status != TF_OK)
            break;
        if (!lstm)
            masked_gru_step_forward<<<blocks_for(n * H), threads_per_block, 0, stream>>>(
                input + base * G * H, recurrent, tape->d_h_prev + base * H, n, H, next_n,
                last ? NULL : plan->d_reset + next_base, tape->d_h + base * H, tape->d_cache + base * 4 * H,
                last ? NULL : tape->d_h_prev + next_base * H);
        else
            masked_lstm_step_forward<<<blocks_for(n * H), threads_per_block, 0, stream>>>(
                input + base * G * H, recurrent, tape->d_c_prev + base * H, n, H, next_n,
                last ? NULL : plan->d_reset + next_base, tape->d_c + base * H, tape->d_h + base * H,
                tape->d_cache + base * 4 * H, last ? NULL : tape->d_h_prev + next_base * H,
                last ? NULL : tape->d_c_prev + next_base * H);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK && total * H > 0) {
        gather_rows<<<blocks_for(total * H), threads_per_block, 0, stream>>>(tape->d_h, plan->d_row_of_step, total, H,
                                                                              0, d_h_out);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK) /* the scratch below is freed: let the kernels finish first */
        status = cuda_check(cudaStreamSynchronize(stream), __FILE__, __LINE__, err);
    cuda_free(context, input);
    cuda_free(context, recurrent);
    if (status != TF_OK)
        cuda_fusion_tape_free(context, tape);
    return status;
}

extern "C" int cuda_fusion_backward(cuda_context *context, const time_encoder *encoder, const sequence_set *set,
                                    const cuda_fusion_plan *plan, const cuda_fusion_tape *tape, const float *d_dh_out,
                                    float *d_dx, const time_encoder_gradients *gradients, tf_error *err)
{
    if (check_shapes(encoder, set, plan, err) != TF_OK)
        return err->code;
    const fusion_plan *p = plan->host;
    if (tape->rows != p->computed_rows || !tape->d_h)
        return tf_error_set(err, TF_ERR_INPUT, "cuda fusion: the tape is not this plan's");
    const int lstm = encoder->kind == TIME_ENCODER_LSTM;
    const int64_t H = encoder->hidden, in = encoder->in, G = time_encoder_gates(encoder->kind);
    const int64_t rows = p->computed_rows, total = set->total_steps, widest = p->active[0];
    cudaStream_t stream = (cudaStream_t)context->stream;
    float *dh_rows = zeroed(context, rows * H, err);
    float *d_input = dh_rows ? zeroed(context, rows * G * H, err) : NULL;
    float *d_recurrent = d_input && !lstm ? zeroed(context, rows * G * H, err) : d_input;
    float *carry_h = d_recurrent ? zeroed(context, widest * H, err) : NULL;
    float *carry_c = carry_h ? zeroed(context, widest * H, err) : NULL;
    float *dh_prev = carry_c ? zeroed(context, widest * H, err) : NULL;
    float *dc_prev = dh_prev ? zeroed(context, widest * H, err) : NULL;
    float *dx_rows = dc_prev && d_dx ? zeroed(context, rows * in, err) : NULL;
    int status = dc_prev && (!d_dx || dx_rows) ? TF_OK : TF_ERR_SYSTEM;
    if (status == TF_OK && total * H > 0) { /* padding rows get no loss gradient */
        scatter_rows<<<blocks_for(total * H), threads_per_block, 0, stream>>>(d_dh_out, plan->d_row_of_step, total, H,
                                                                               dh_rows);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    for (int64_t t = p->num_steps - 1; t >= 0 && status == TF_OK; t--) {
        const int64_t n = p->active[t], base = p->step_offset[t];
        if (!lstm) {
            masked_gru_step_backward<<<blocks_for(n * H), threads_per_block, 0, stream>>>(
                tape->d_h_prev + base * H, tape->d_cache + base * 4 * H, dh_rows + base * H, carry_h, n, H,
                d_input + base * G * H, d_recurrent + base * G * H, dh_prev);
        } else {
            masked_lstm_step_backward<<<blocks_for(n * H), threads_per_block, 0, stream>>>(
                tape->d_cache + base * 4 * H, tape->d_c_prev + base * H, tape->d_c + base * H, dh_rows + base * H,
                carry_h, carry_c, n, H, d_input + base * G * H, dc_prev);
            if (cuda_check(cudaGetLastError(), __FILE__, __LINE__, err) == TF_OK)
                status = cuda_check(cudaMemsetAsync(dh_prev, 0, (size_t)(n * H) * sizeof(float), stream), __FILE__,
                                    __LINE__, err);
            else
                status = TF_ERR_SYSTEM;
        }
        if (status == TF_OK)
            status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
        if (status == TF_OK) /* dL/dh_prev += (gate gradients) W_hh */
            status = cuda_linear_backward(context, tape->d_h_prev + base * H, encoder->weight_hh,
                                          d_recurrent + base * G * H, n, H, G * H, dh_prev, NULL, NULL, err);
        if (status == TF_OK) {
            masked_carry<<<blocks_for(n * H), threads_per_block, 0, stream>>>(
                dh_prev, lstm ? dc_prev : NULL, plan->d_reset + base, n, H, carry_h, carry_c);
            status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
        }
    }
    if (status == TF_OK)
        status = cuda_linear_backward(context, tape->d_x, encoder->weight_ih, d_input, rows, in, G * H, dx_rows,
                                      gradients ? gradients->weight_ih : NULL, gradients ? gradients->bias_ih : NULL,
                                      err);
    if (status == TF_OK && gradients && (gradients->weight_hh || gradients->bias_hh))
        status = cuda_linear_backward(context, tape->d_h_prev, encoder->weight_hh, d_recurrent, rows, H, G * H, NULL,
                                      gradients->weight_hh, gradients->bias_hh, err);
    if (status == TF_OK && d_dx && total * in > 0) {
        gather_rows<<<blocks_for(total * in), threads_per_block, 0, stream>>>(dx_rows, plan->d_row_of_step, total, in,
                                                                               1, d_dx);
        status = cuda_check(cudaGetLastError(), __FILE__, __LINE__, err);
    }
    if (status == TF_OK)
        status = cuda_check(cudaStreamSynchronize(stream), __FILE__, __LINE__, err);
    if (d_recurrent != d_input)
        cuda_free(context, d_recurrent);
    void *scratch[] = {dh_rows, d_input, carry_h, carry_c, dh_prev, dc_prev, dx_rows};
    cuda_free_each(context, scratch, sizeof scratch / sizeof scratch[0]);
    return status;
}
