/**
 * @file ref/schedule_dqn.h
 * @brief DynaHB's batch-size adjuster: a deep Q-network that picks one of nine hybrid batch
 *        sizes every few steps from how fast the loss falls ([DynaHB] §5.1, Definitions 4-5,
 *        Eq. 3).
 *
 * State: the relative training-loss reduction of the last interval, Delta = (L_prev - L) / L_prev
 * (one number). Actions: the nine sizes of hybrid_action_sizes(). Q-network: Linear(1, 16), ReLU,
 * Linear(16, 9), initialized as torch initializes Linear (uniform +-1/sqrt(fan_in)), trained by
 * Adam (lr 0.005) on the TD loss (1/B) sum_b (Q(s_b)[a_b] - y_b)^2 with
 * y_b = r_b + gamma max_a' Q'(s'_b)[a'] (gamma 0.99, never terminal), Q' a target network
 * softly updated after each training step (theta' <- tau theta + (1 - tau) theta', tau 0.01).
 * Replay: the last 1000 transitions, minibatches of 5 drawn without replacement, training from
 * 5 transitions on. Exploration: epsilon-greedy, epsilon from 1 down by x0.95 per training step
 * to 0.1; ties in argmax go to the lowest action.
 *
 * Reward (Eq. 3): R = (t_l - t_c) / t_l + (Delta_c - Delta_l) / Delta_c. Decisions (the paper
 * leaves them open; chapters/07-schedule.md): t is a **work count** (rows and edges computed in
 * the interval), not a timer, so a run repeats bit for bit; Delta is the *training* loss's
 * reduction (DynaHB's code uses the global test MSE, which lets the test set steer training); a
 * zero denominator gives that term 0; each term is clipped to [-1, 1]; and, as in the code, a
 * loss that did not fall is never rewarded: Delta_c <= 0 gives -|R_time| - |R_loss|.
 *
 * Every random draw comes from the agent's own rng (seeded once), and all arithmetic is
 * sequential float code: the same seed and the same inputs give the same actions and parameters
 * bit for bit.
 */
#ifndef TWOFOLD_REF_SCHEDULE_DQN_H
#define TWOFOLD_REF_SCHEDULE_DQN_H

#include <stdint.h>

#include "ref/nn/adam.h"
#include "ref/core/error.h"
#include "ref/nn/parameters.h"
#include "ref/core/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The number of actions (batch sizes). */
#define DQN_ACTIONS 9
/** The Q-network's hidden width. */
#define DQN_HIDDEN 16

/** The agent's settings. */
typedef struct dqn_options {
    double gamma;            /**< discount (0.99) */
    double epsilon;          /**< first exploration rate (1) */
    double epsilon_decay;    /**< multiplied in after each training step (0.95) */
    double epsilon_min;      /**< floor (0.1) */
    double learning_rate;    /**< Adam's (0.005) */
    double tau;              /**< soft update of the target network (0.01) */
    int64_t replay_capacity; /**< transitions kept (1000) */
    int64_t minibatch;       /**< transitions per training step (5) */
    uint64_t seed;           /**< initial weights and every draw */
} dqn_options;

/** The defaults above, seed 1. */
void dqn_options_default(dqn_options *o);

/** An agent. Owns its networks, optimizer and replay. */
typedef struct dqn {
    dqn_options options;     /**< the settings */
    parameter_list online;   /**< l1.weight [16][1], l1.bias [16], l2.weight [9][16], l2.bias [9] */
    parameter_list target;   /**< the same names: the slowly following copy */
    adam optimizer;          /**< on online */
    float *replay;           /**< [capacity][4] state, action, reward, next state */
    int64_t replay_count;    /**< transitions held */
    int64_t replay_next;     /**< where the next one goes (a ring) */
    double epsilon;          /**< current exploration rate */
    rng random;              /**< every draw */
    int64_t updates;         /**< training steps taken */
} dqn;

/** Create an agent. */
int dqn_create(dqn *q, const dqn_options *o, tf_error *err);

/** Release an agent (safe on a zeroed one). */
void dqn_free(dqn *q);

/** The Q-values of @p net for @p state. */
void dqn_q_values(const parameter_list *net, float state, float q[DQN_ACTIONS]);

/** Epsilon-greedy: a random action with probability epsilon, else argmax Q (lowest on ties). */
int dqn_choose(dqn *q, float state);

/** Remember a transition (the oldest is dropped when full). */
void dqn_remember(dqn *q, float state, int action, float reward, float next_state);

/** One training step on a minibatch, then the soft update and the epsilon decay: the TD loss, or
 *  -1 while fewer transitions than a minibatch are held (nothing happens then). */
double dqn_train_step(dqn *q);

/** Eq. 3 with the decisions above: work in the last and current interval, loss reductions. */
double dqn_reward(double work_last, double work_current, double drop_last, double drop_current);

/**
 * The TD loss (1/n) sum (Q(states_i)[actions_i] - targets_i)^2 of @p online and, when
 * @p backward, its gradient added into @p online's gradients (for the gradient check).
 * (@p states: [n].)
 * (@p actions: [n].)
 * (@p targets: [n] the TD targets y.)
 */
double dqn_td_loss(parameter_list *online, const float *states, const int *actions, const float *targets, int64_t n,
                   int backward);

#ifdef __cplusplus
}
#endif

#endif
