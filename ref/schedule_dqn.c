#include "ref/schedule_dqn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref/nn/layers.h"
#include "ref/core/memory.h"

void dqn_options_default(dqn_options *o)
{
    o->gamma = 0.99;
    o->epsilon = 1.0;
    o->epsilon_decay = 0.95;
    o->epsilon_min = 0.1;
    o->learning_rate = 0.005;
    o->tau = 0.01;
    o->replay_capacity = 1000;
    o->minibatch = 5;
    o->seed = 1;
}

/* The four parameters, in order: l1.weight, l1.bias, l2.weight, l2.bias. */
static int add_network(parameter_list *net, tf_error *err)
{
    const int64_t w1[2] = {DQN_HIDDEN, 1}, b1[1] = {DQN_HIDDEN}, w2[2] = {DQN_ACTIONS, DQN_HIDDEN}, b2[1] = {DQN_ACTIONS};
    if (parameters_add(net, "l1.weight", 2, w1, err) < 0 || parameters_add(net, "l1.bias", 1, b1, err) < 0 ||
        parameters_add(net, "l2.weight", 2, w2, err) < 0 || parameters_add(net, "l2.bias", 1, b2, err) < 0)
        return TF_ERR_INPUT;
    return TF_OK;
}

void dqn_free(dqn *q)
{
    parameters_free(&q->online);
    parameters_free(&q->target);
    adam_free(&q->optimizer);
    free(q->replay);
    memset(q, 0, sizeof *q);
}

int dqn_create(dqn *q, const dqn_options *o, tf_error *err)
{
    memset(q, 0, sizeof *q);
    q->options = *o;
    q->epsilon = o->epsilon;
    if (o->replay_capacity < o->minibatch || o->minibatch < 1 || o->minibatch > 64)
        return tf_error_set(err, TF_ERR_INPUT, "DQN replay of %lld for minibatches of %lld", (long long)o->replay_capacity,
                            (long long)o->minibatch);
    rng_seed(&q->random, o->seed);
    int status = add_network(&q->online, err) == TF_OK && add_network(&q->target, err) == TF_OK ? TF_OK : TF_ERR_INPUT;
    if (status == TF_OK) {
        /* torch's Linear: weight and bias uniform in +-1/sqrt(fan_in) */
        parameter_init_uniform(&q->online.items[0], 1.0, &q->random);
        parameter_init_uniform(&q->online.items[1], 1.0, &q->random);
        parameter_init_uniform(&q->online.items[2], 1.0 / sqrt((double)DQN_HIDDEN), &q->random);
        parameter_init_uniform(&q->online.items[3], 1.0 / sqrt((double)DQN_HIDDEN), &q->random);
        parameters_copy_values(&q->target, &q->online);
        status = adam_create(&q->optimizer, &q->online, o->learning_rate, err);
    }
    if (status == TF_OK &&
        !(q->replay = tf_alloc((size_t)o->replay_capacity * 4, sizeof *q->replay, "DQN replay", err)))
        status = TF_ERR_INPUT;
    if (status != TF_OK)
        dqn_free(q);
    return status;
}

/* Forward of one state: hidden [16] = relu(W1 s + b1), q [9] = W2 hidden + b2. */
static void forward(const parameter_list *net, float state, float *preactivation, float *hidden, float *q)
{
    ref_linear_forward(&state, net->items[0].value.data, net->items[1].value.data, 1, 1, DQN_HIDDEN, preactivation);
    ref_relu_forward(preactivation, DQN_HIDDEN, hidden);
    ref_linear_forward(hidden, net->items[2].value.data, net->items[3].value.data, 1, DQN_HIDDEN, DQN_ACTIONS, q);
}

void dqn_q_values(const parameter_list *net, float state, float q[DQN_ACTIONS])
{
    float preactivation[DQN_HIDDEN], hidden[DQN_HIDDEN];
    forward(net, state, preactivation, hidden, q);
}

static int argmax(const float *q)
{
    int best = 0;
    for (int a = 1; a < DQN_ACTIONS; a++)
        if (q[a] > q[best])
            best = a;
    return best;
}

int dqn_choose(dqn *q, float state)
{
    if (rng_uniform(&q->random) < q->epsilon)
        return (int)rng_below(&q->random, DQN_ACTIONS);
    float values[DQN_ACTIONS];
    dqn_q_values(&q->online, state, values);
    return argmax(values);
}

void dqn_remember(dqn *q, float state, int action, float reward, float next_state)
{
    float *entry = q->replay + 4 * q->replay_next;
    entry[0] = state, entry[1] = (float)action, entry[2] = reward, entry[3] = next_state;
    q->replay_next = (q->replay_next + 1) % q->options.replay_capacity;
    if (q->replay_count < q->options.replay_capacity)
        q->replay_count++;
}

double dqn_td_loss(parameter_list *online, const float *states, const int *actions, const float *targets, int64_t n,
                   int backward)
{
    double loss = 0;
    for (int64_t i = 0; i < n; i++) {
        float preactivation[DQN_HIDDEN], hidden[DQN_HIDDEN], q[DQN_ACTIONS];
        forward(online, states[i], preactivation, hidden, q);
        const float difference = q[actions[i]] - targets[i];
        loss += (double)difference * (double)difference / (double)n;
        if (!backward)
            continue;
        /* d loss / d q: 2 (Q - y) / n on the taken action only */
        float dq[DQN_ACTIONS] = {0}, dhidden[DQN_HIDDEN] = {0}, dpreactivation[DQN_HIDDEN] = {0};
        dq[actions[i]] = 2.0f * difference / (float)n;
        ref_linear_backward(hidden, online->items[2].value.data, dq, 1, DQN_HIDDEN, DQN_ACTIONS, dhidden,
                            online->items[2].grad.data, online->items[3].grad.data);
        ref_relu_backward(hidden, dhidden, DQN_HIDDEN, dpreactivation);
        ref_linear_backward(&states[i], online->items[0].value.data, dpreactivation, 1, 1, DQN_HIDDEN, NULL,
                            online->items[0].grad.data, online->items[1].grad.data);
    }
    return loss;
}

double dqn_train_step(dqn *q)
{
    const int64_t b = q->options.minibatch;
    if (q->replay_count < b)
        return -1;
    float states[64], targets[64];
    int actions[64];
    int64_t picked[64];
    /* b transitions without replacement: a partial Fisher-Yates over the held indices */
    int64_t *index = malloc((size_t)q->replay_count * sizeof *index);
    if (!index || b > 64) {
        free(index);
        return -1;
    }
    for (int64_t k = 0; k < q->replay_count; k++)
        index[k] = k;
    for (int64_t k = 0; k < b; k++) {
        const int64_t pick = k + (int64_t)rng_below(&q->random, (uint64_t)(q->replay_count - k));
        const int64_t swap = index[k];
        index[k] = index[pick];
        index[pick] = swap;
        picked[k] = index[k];
    }
    free(index);
    for (int64_t k = 0; k < b; k++) {
        const float *t = q->replay + 4 * picked[k];
        float next[DQN_ACTIONS];
        dqn_q_values(&q->target, t[3], next);
        states[k] = t[0];
        actions[k] = (int)t[1];
        targets[k] = (float)(t[2] + q->options.gamma * next[argmax(next)]);
    }
    parameters_zero_grad(&q->online);
    const double loss = dqn_td_loss(&q->online, states, actions, targets, b, 1);
    ref_adam_step(&q->optimizer, &q->online);
    for (int64_t p = 0; p < q->online.count; p++) { /* theta' <- tau theta + (1 - tau) theta' */
        const tensor *from = &q->online.items[p].value;
        float *to = q->target.items[p].value.data;
        for (int64_t v = 0; v < from->size; v++)
            to[v] = (float)(q->options.tau * from->data[v] + (1 - q->options.tau) * to[v]);
    }
    q->epsilon = fmax(q->epsilon * q->options.epsilon_decay, q->options.epsilon_min);
    q->updates++;
    return loss;
}

static double clip(double x) { return x < -1 ? -1 : x > 1 ? 1 : x; }

double dqn_reward(double work_last, double work_current, double drop_last, double drop_current)
{
    const double time_term = work_last != 0 ? clip((work_last - work_current) / work_last) : 0;
    const double loss_term = drop_current != 0 ? clip((drop_current - drop_last) / drop_current) : 0;
    if (drop_current <= 0)
        return -fabs(time_term) - fabs(loss_term);
    return time_term + loss_term;
}
