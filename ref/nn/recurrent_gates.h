/**
 * @file ref/nn/recurrent_gates.h
 * @brief The pointwise equations of the GRU cell and of the LSTM cell (with and without
 *        peepholes), one hidden unit at a time, written once for the optimized twins on the CPU (opt/kernels.c, opt/fusion.c)
 *        and on the GPU (cuda/recurrent.cu, cuda/fusion.cu).
 *
 * The equations are torch.nn.GRUCell's and torch.nn.LSTMCell's, as ref/nn/recurrent.h states
 * them. The reference itself, ref/nn/recurrent.c, deliberately does **not** use this header: it
 * keeps its own plain loops as the independent oracle, so that a slip here shows up as a
 * difference against it instead of being copied into both sides of the comparison. Every
 * expression below is ref's, term for term and in the same order; that is what lets the CPU
 * twins be bitwise equal to it. The header lives in ref/ only because both opt/ and cuda/ need
 * it, and cuda/ never includes opt/.
 *
 * Layout: a row's gate blocks are [G][H] (G = 3 for the GRU, 4 for the LSTM). Each function
 * takes its pre-activations as numbers (so a caller may form them from one array or from two,
 * or read one gate from elsewhere) and reads or writes the row's [G][H] arrays through a
 * pointer to unit j and the stride @p H: gate block b of unit j is `p[b * H]`. Gradients that
 * later terms also add into (dL/dh, dL/dc) are added through a pointer, which may be NULL.
 *
 * **Host and device.** Every function is #TF_HOST_DEVICE and `static inline`, so each .c and
 * .cu file compiles its own copy from the same source. What differs is the compiler, not the
 * formula:
 *  - On the host (C11, ISO mode) the sigmoid and tanh are the project's own tf_sigmoidf() and
 *    tf_tanhf() (ref/nn/activation.h), the same calls ref/nn/recurrent.c makes, and every product
 *    and sum is rounded on its own (ISO C mode does not contract a * b + c into a fused
 *    multiply-add). Given the same pre-activations, the CPU twins' gates are bitwise ref's
 *    (opt_gru_cell_*() differ from ref only through their sgemm products).
 *  - On the device, the gates use CUDA's own expf() and tanhf() (accurate to a few ulp, with
 *    their bounds in the CUDA C++ Programming Guide's table of mathematical functions, but not
 *    the C library's bits), and it contracts a * b + c into one fused multiply-add (its default,
 *    --fmad=true). The GPU twins are therefore equal to the reference within the GPU fp
 *    tolerance, not bitwise. They use the accurate functions, not the __expf() intrinsic or
 *    --use_fast_math, so the only differences are those few ulp and the fused roundings.
 *
 * Which product nvcc fuses depends on the order in which the values become available: in
 * h' = (1 - z) n + z h it fuses (1 - z) n when h is loaded after the gates are computed, and
 * z h when h was loaded before them. So gru_unit_forward() reads h through a pointer, after
 * the gates, and gradients that accumulate are added inside the functions, under their NULL
 * test (a product computed outside the test is not fused with the addition inside it). The
 * kernels thus round as they did when each wrote these equations inline: their PTX computes
 * the same expressions, fused the same way.
 */
#ifndef TWOFOLD_REF_RECURRENT_GATES_H
#define TWOFOLD_REF_RECURRENT_GATES_H

#include <math.h>
#include <stdint.h>

#include "ref/nn/activation.h"

#ifdef __CUDACC__
/** Compile a function for the host and, under nvcc, for the device too. */
#define TF_HOST_DEVICE __host__ __device__
#else
/** Compile a function for the host and, under nvcc, for the device too. */
#define TF_HOST_DEVICE
#endif

/** The logistic function: on the host ref/nn/recurrent.c's (ref/nn/activation.h), on the device CUDA's expf(). */
TF_HOST_DEVICE static inline float gate_sigmoid(float x)
{
#ifdef __CUDA_ARCH__
    return 1.0f / (1.0f + expf(-x));
#else
    return tf_sigmoidf(x);
#endif
}

/** The hyperbolic tangent: on the host ref/nn/recurrent.c's (ref/nn/activation.h), on the device CUDA's tanhf(). */
TF_HOST_DEVICE static inline float gate_tanh(float x)
{
#ifdef __CUDA_ARCH__
    return tanhf(x);
#else
    return tf_tanhf(x);
#endif
}

/**
 * GRU forward, unit j of one row (ref/nn/recurrent.h gives the equations), from the gate blocks'
 * input sums i_* = x W_ih^T + b_ih and hidden sums h_* = h W_hh^T + b_hh.
 * @param input_r,input_z,input_n     unit j of i_r, i_z, i_n
 * @param hidden_r,hidden_z,hidden_n  unit j of h_r, h_z, h_n
 * @param h_prev  [1] unit j of the carried state h (read after the gates: see above)
 * @param H       the hidden width: the stride between the blocks of @p cache
 * @param cache   [4][H] the row's cache from unit j on: gets r, z, n and h_n (what the
 *                backward needs) at [0], [H], [2H], [3H]
 * @return h' of unit j
 */
TF_HOST_DEVICE static inline float gru_unit_forward(float input_r, float input_z, float input_n, float hidden_r,
                                                    float hidden_z, float hidden_n, const float *h_prev, int64_t H,
                                                    float *cache)
{
    const float r = gate_sigmoid(input_r + hidden_r);
    const float z = gate_sigmoid(input_z + hidden_z);
    const float candidate = gate_tanh(input_n + r * hidden_n);
    cache[0] = r;
    cache[H] = z;
    cache[2 * H] = candidate;
    cache[3 * H] = hidden_n;
    return (1.0f - z) * candidate + z * *h_prev;
}

/**
 * GRU backward, unit j of one row: the gradients of the six pre-activations from dL/dh'.
 * @param dh_next      unit j of dL/dh'
 * @param h_prev       unit j of the carried state h the forward read
 * @param cache        [4][H] the forward's cache from unit j on (r, z, n, h_n)
 * @param H            the hidden width: the stride of every [G][H] array here
 * @param d_input      [3][H] from unit j on: gets dL/di_r, dL/di_z, dL/di_n
 * @param d_recurrent  [3][H] from unit j on: gets dL/dh_r, dL/dh_z, dL/dh_n (differs from
 *                     @p d_input only in the candidate block, where h_n is scaled by r)
 * @param dh_prev      [1] unit j of dL/dh: gets the direct term dL/dh' z added (the products
 *                     through W_hh are the caller's); NULL: not wanted
 */
TF_HOST_DEVICE static inline void gru_unit_backward(float dh_next, float h_prev, const float *cache, int64_t H,
                                                    float *d_input, float *d_recurrent, float *dh_prev)
{
    const float r = cache[0], z = cache[H], candidate = cache[2 * H], hidden_n = cache[3 * H];
    /* h' = (1 - z) n + z h */
    const float d_candidate = dh_next * (1.0f - z);
    const float d_z = dh_next * (h_prev - candidate);
    /* n = tanh(i_n + r h_n) */
    const float d_n_pre = d_candidate * (1.0f - candidate * candidate);
    const float d_r = d_n_pre * hidden_n;
    const float d_r_pre = d_r * r * (1.0f - r), d_z_pre = d_z * z * (1.0f - z);
    d_input[0] = d_r_pre;
    d_input[H] = d_z_pre;
    d_input[2 * H] = d_n_pre;
    d_recurrent[0] = d_r_pre;
    d_recurrent[H] = d_z_pre;
    d_recurrent[2 * H] = d_n_pre * r;
    if (dh_prev)
        *dh_prev += dh_next * z;
}

/**
 * LSTM forward, unit j of one row (ref/nn/recurrent.h gives the equations), from the summed
 * pre-activations a = x W_ih^T + b_ih + h W_hh^T + b_hh.
 * @param pre_i,pre_f,pre_g,pre_o  unit j of the four pre-activation blocks
 * @param c_prev  unit j of the carried cell state c
 * @param H       the hidden width: the stride between the blocks of @p gates
 * @param gates   [4][H] the row's gates from unit j on: gets i, f, g, o at [0], [H], [2H], [3H]
 * @param c_next  [1] gets c' of unit j
 * @return h' of unit j
 */
TF_HOST_DEVICE static inline float lstm_unit_forward(float pre_i, float pre_f, float pre_g, float pre_o, float c_prev,
                                                     int64_t H, float *gates, float *c_next)
{
    const float i = gate_sigmoid(pre_i);
    const float f = gate_sigmoid(pre_f);
    const float g = gate_tanh(pre_g);
    const float o = gate_sigmoid(pre_o);
    gates[0] = i;
    gates[H] = f;
    gates[2 * H] = g;
    gates[3 * H] = o;
    const float cell = f * c_prev + i * g;
    *c_next = cell;
    return o * gate_tanh(cell);
}

/**
 * LSTM backward, unit j of one row: the gradients of the four pre-activations.
 * @param dh_next  unit j of dL/dh'
 * @param dc_next  unit j of what later steps send back to c' (0 when nothing)
 * @param c_prev   unit j of the carried cell state c the forward read
 * @param c_next   unit j of the forward's c'
 * @param gates    [4][H] the forward's gates from unit j on (i, f, g, o)
 * @param H        the hidden width: the stride of @p gates and @p d_preactivation
 * @param d_preactivation  [4][H] from unit j on: gets dL/da_i, dL/da_f, dL/da_g, dL/da_o
 * @param dc_prev  [1] unit j of dL/dc: gets dL/dc' f added; NULL: not wanted
 */
TF_HOST_DEVICE static inline void lstm_unit_backward(float dh_next, float dc_next, float c_prev, float c_next,
                                                     const float *gates, int64_t H, float *d_preactivation,
                                                     float *dc_prev)
{
    const float i = gates[0], f = gates[H], g = gates[2 * H], o = gates[3 * H];
    const float tanh_cell = gate_tanh(c_next);
    /* h' = o tanh(c'): c' collects dh' through tanh plus what later steps send */
    const float d_cell = dh_next * o * (1.0f - tanh_cell * tanh_cell) + dc_next;
    const float d_o = dh_next * tanh_cell;
    d_preactivation[0] = d_cell * g * i * (1.0f - i);
    d_preactivation[H] = d_cell * c_prev * f * (1.0f - f);
    d_preactivation[2 * H] = d_cell * i * (1.0f - g * g);
    d_preactivation[3 * H] = d_o * o * (1.0f - o);
    if (dc_prev)
        *dc_prev += d_cell * f;
}

/**
 * LSTM with peepholes forward, unit j of one row (ref_lstm_peephole_forward() gives the equations):
 * lstm_unit_forward() with the gates i and f reading w_ci c and w_cf c, and o reading w_co c'.
 * @param pre_i,pre_f,pre_g,pre_o  unit j of the four sums without their peephole terms
 * @param c_prev  unit j of the carried cell state c
 * @param w_i,w_f,w_o  unit j of the three peepholes
 * @param H,gates,c_next  as lstm_unit_forward()
 * @return h' of unit j
 */
TF_HOST_DEVICE static inline float lstm_peephole_unit_forward(float pre_i, float pre_f, float pre_g, float pre_o,
                                                              float c_prev, float w_i, float w_f, float w_o, int64_t H,
                                                              float *gates, float *c_next)
{
    const float i = gate_sigmoid(pre_i + w_i * c_prev);
    const float f = gate_sigmoid(pre_f + w_f * c_prev);
    const float g = gate_tanh(pre_g);
    const float cell = f * c_prev + i * g;
    const float o = gate_sigmoid(pre_o + w_o * cell);
    gates[0] = i;
    gates[H] = f;
    gates[2 * H] = g;
    gates[3 * H] = o;
    *c_next = cell;
    return o * gate_tanh(cell);
}

/**
 * LSTM with peepholes backward, unit j of one row (ref_lstm_peephole_backward()'s terms): as
 * lstm_unit_backward(), with the peepholes' paths: c' also reaches h' through o, and c through i
 * and f. @p dc_prev, when not NULL, gets dL/dc' f + dL/da_i w_ci + dL/da_f w_cf added.
 */
TF_HOST_DEVICE static inline void lstm_peephole_unit_backward(float dh_next, float dc_next, float c_prev, float c_next,
                                                              float w_i, float w_f, float w_o, const float *gates,
                                                              int64_t H, float *d_preactivation, float *dc_prev)
{
    const float i = gates[0], f = gates[H], g = gates[2 * H], o = gates[3 * H];
    const float squashed = gate_tanh(c_next);
    const float d_o = dh_next * squashed * o * (1.0f - o);
    const float d_cell = dc_next + dh_next * o * (1.0f - squashed * squashed) + d_o * w_o;
    const float d_i = d_cell * g * i * (1.0f - i);
    const float d_f = d_cell * c_prev * f * (1.0f - f);
    d_preactivation[0] = d_i;
    d_preactivation[H] = d_f;
    d_preactivation[2 * H] = d_cell * i * (1.0f - g * g);
    d_preactivation[3 * H] = d_o;
    if (dc_prev)
        *dc_prev += d_cell * f + d_i * w_i + d_f * w_f;
}

#endif
