/**
 * @file datasets/generate.h
 * @brief Seeded generators of dynamic graphs at any size: evolving power-law snapshot
 *        sequences, planted communities that evolve (labelled) and skewed event streams.
 *
 * The real datasets are small (chickenpox has 20 vertices); the papers' claims are about
 * millions of edges. These generators make graphs of a chosen size, churn and skew, the
 * same ones for the same seed on any run, so techniques can be measured where they matter
 * and tests can sweep the parameters the papers vary.
 *
 * Degrees follow a power law through the Chung-Lu construction (Chung and Lu, 2002): the
 * vertex ranked k (in a seeded random order) has weight (k + 1)^(-1/(gamma - 1)), and each
 * edge endpoint is drawn with probability proportional to weight, which gives expected
 * degrees with a power-law tail of exponent gamma.
 */
#ifndef TWOFOLD_DATASETS_GENERATE_H
#define TWOFOLD_DATASETS_GENERATE_H

#include <stdint.h>

#include "ref/core/error.h"
#include "ref/data/events.h"
#include "ref/core/progress.h"
#include "ref/data/snapshot.h"

/** Parameters of generate_powerlaw(). Fill with powerlaw_params_default() first. */
typedef struct powerlaw_params {
    int64_t num_nodes;       /**< vertex id space N (default 1000) */
    int64_t num_edges;       /**< edges in every snapshot, or in the first one with growth (default 10 N) */
    double growth;           /**< the last snapshot has `growth` times the first one's edges, the ones
                                  between grow linearly (default 1: the same count everywhere) */
    int64_t num_snapshots;   /**< T (default 10) */
    double churn;            /**< fraction of edges replaced between snapshots, and of present
                                  vertices whose features change (default 0.01) */
    double vertex_churn;     /**< fraction of N that departs, and as many that arrive, per step
                                  (default 0: every vertex always present) */
    double exponent;         /**< power-law exponent gamma of the degrees, > 2 (default 2.5) */
    int64_t feature_width;   /**< F >= 1 feature columns (default 4) */
    int degree_features;     /**< 1: columns 0 and 1 are log-degrees (default); 0: every column
                                  drifts, so exactly a `churn` fraction of vertices change features */
    uint64_t seed;           /**< same seed, same graph (default 1) */
    progress_fn progress;    /**< optional progress callback (NULL = silent) */
    void *progress_context;  /**< passed to @ref progress */
} powerlaw_params;

/** Set @p p to the defaults listed in #powerlaw_params. */
void powerlaw_params_default(powerlaw_params *p);

/**
 * Generate an evolving power-law graph.
 *
 * Snapshot 0 has `num_edges` distinct edges (no self loops) drawn by weight among present
 * vertices. Each next snapshot removes a random `churn` fraction of the edges, then
 * `vertex_churn * N` present vertices depart (with their edges) and as many absent ones
 * arrive, then new edges are drawn until there are `num_edges` again (with `growth` g, snapshot
 * t has round(num_edges (1 + (g - 1) t / (T - 1))) edges: a skewed sequence whose windows
 * cost more and more, as a growing forum's would). Weights are uniform
 * in [0.5, 1.5). Vertices start with a random `vertex_churn` fraction absent.
 *
 * Features of a present vertex v at t: column 0 = log(1 + weighted in-degree), column 1 =
 * log(1 + out-degree) (if F >= 2), further columns a random vector that drifts for a `churn`
 * fraction of vertices per step. The degree columns change for every vertex an edge change
 * touches; with `degree_features` 0 all columns drift, ReInc's synthetic protocol (features
 * replaced for a change-ratio fraction of vertices, [ReInc] §5 "Datasets"; citations:
 * chapters/references.md). Target: log(1 + weighted in-degree of v at t + 1) (the last
 * snapshot predicts itself), the regression label of DynaHB's released code [DynaHB].
 *
 * @return 0, or TF_ERR_INPUT for invalid parameters, a graph too dense for its vertex
 *         count, or a size that does not fit in memory (checked before generating).
 */
int generate_powerlaw(const powerlaw_params *p, snapshot_seq *out, tf_error *err);

/** The number of edges generate_powerlaw() gives snapshot @p t (num_edges, or more with growth). */
int64_t powerlaw_edges_at(const powerlaw_params *p, int64_t t);

/** Parameters of generate_communities(). Fill with community_params_default() first. */
typedef struct community_params {
    int64_t num_nodes;       /**< vertices N, all present throughout (default 200) */
    int64_t num_edges;       /**< distinct edges in every snapshot (default 8 N) */
    int64_t num_snapshots;   /**< T (default 10) */
    int64_t num_classes;     /**< communities C >= 2 (default 4) */
    double change;           /**< fraction of N that moves to another community before each snapshot after
                                  the first, in [0, 1] (default 0.05) */
    double homophily;        /**< probability that an edge's source is drawn from its destination's
                                  community (else from all vertices), in [0, 1] (default 0.8) */
    int64_t feature_width;   /**< F >= 1 feature columns (default 8) */
    double noise;            /**< standard deviation of the features' Gaussian noise, >= 0 (default 1) */
    double labelled;         /**< fraction of vertices labelled in each snapshot, in (0, 1] (default 0.8) */
    uint64_t seed;           /**< same seed, same graph (default 1) */
} community_params;

/** Set @p p to the defaults listed in #community_params. */
void community_params_default(community_params *p);

/**
 * Generate planted communities that evolve over snapshots (a stochastic block model whose
 * blocks move), for node classification (ref/models/classify_task.h).
 *
 * Snapshot 0 gives each vertex a community drawn uniformly from C; before each later snapshot,
 * exactly round(change N) distinct vertices, drawn uniformly, each move to one of the other
 * C - 1 communities (uniformly). Every snapshot draws its own `num_edges` distinct edges u -> v
 * (no loops, weight 1): v uniform, u from v's community with probability `homophily`, else
 * uniform. Features of v at t: 1 in column (community mod F), plus Gaussian noise of
 * deviation `noise` in every column, drawn afresh per snapshot (a noisy signal; the graph's
 * homophily is the other one). Labels: each vertex's community, labelled in each snapshot with
 * probability `labelled` (the rest #SNAPSHOT_UNLABELLED). Target (regression, one column):
 * log(1 + in-degree) at t.
 *
 * @return 0, or TF_ERR_INPUT for invalid parameters ("communities: KEY=VALUE, expected ...") or a
 *         graph too dense to draw.
 */
int generate_communities(const community_params *p, snapshot_seq *out, tf_error *err);

/** Parameters of generate_events(). Fill with event_params_default() first. */
typedef struct event_params {
    int64_t num_nodes;       /**< vertices (default 1000) */
    int64_t num_events;      /**< events (default 10000) */
    double repeat;           /**< probability that an event repeats the pair of a uniformly
                                  chosen earlier event, in [0, 1) (default 0.5) */
    double exponent;         /**< power-law exponent of endpoint popularity, > 2 (default 2.5) */
    int64_t feature_width;   /**< edge feature columns, standard normal (default 0) */
    uint64_t seed;           /**< default 1 */
} event_params;

/** Set @p p to the defaults listed in #event_params. */
void event_params_default(event_params *p);

/**
 * Generate a time-ordered event stream. Timestamps are integers with exponential gaps of
 * mean 5 (so some events share a timestamp, as in real data). A repeated event copies the
 * pair of a uniformly chosen earlier event: pairs that occurred often are repeated more,
 * the skew of real interaction streams. Other events draw source and destination by
 * power-law weight, never equal.
 */
int generate_events(const event_params *p, event_stream *out, tf_error *err);

#endif
