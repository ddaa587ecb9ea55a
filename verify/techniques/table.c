/* The technique table (verify/techniques/table.h): one line per entry, in chapter order. A new
 * technique adds its files and one line here; demo, verify and the bench program then see it. */
#include "verify/techniques/table.h"

#include <string.h>

const technique *const technique_table[] = {
    &technique_train,            /* 01 the optimized engine: data-parallel training */
    &technique_incremental,      /* 02 ReInc incremental aggregation */
    &technique_incremental_train, /* 02 ReInc's aggregations served to a model in training */
    &technique_minibatch,        /* 02 ReInc's sampled mini-batches, served on the ranks */
    &technique_fusion_temporal,  /* 03 DGC temporal fusion */
    &technique_fusion_spatial,   /* 03 DGC spatial fusion */
    &technique_dispatch,         /* 04 Sven redundancy-free dispatch */
    &technique_async,            /* 05 asynchronous and stale updates (DynaHB averaging, Sven staleness) */
    &technique_partition,        /* 06 vertex partitioning: DynaHB cache, exchange mode, the partitioners */
    &technique_schedule,         /* 07 DyGNeX schedules */
    &technique_schedule_hybrid,  /* 07 DynaHB hybrid batches and their reservoir */
    NULL,
};

const technique *technique_find(const char *name)
{
    for (const technique *const *t = technique_table; *t; t++)
        if (strcmp((*t)->name, name) == 0)
            return *t;
    return NULL;
}

int technique_named(const technique *t, const char *word)
{
    return word && (strcmp(word, t->name) == 0 || strcmp(word, t->stem) == 0 || strcmp(word, "all") == 0);
}

int technique_choose(const char *word, unsigned char *chosen)
{
    int named = 0;
    for (int k = 0; k < TECHNIQUE_TABLE_MAX && technique_table[k]; k++)
        if (technique_named(technique_table[k], word))
            chosen[k] = 1, named++;
    return named;
}

int technique_demo_rows(const unsigned char *chosen, const char *spoil, engine_row *rows, int max)
{
    int count = 0;
    for (int k = 0; k < TECHNIQUE_TABLE_MAX && technique_table[k]; k++) {
        const technique *t = technique_table[k];
        for (const technique_case *c = t->demo; (!chosen || chosen[k]) && c->data && count < max; c++)
            rows[count++] = (engine_row){t, c->variant, c->data, NULL, c->label, technique_named(t, spoil)};
    }
    return count;
}

int technique_variant_rows(const unsigned char *chosen, const dataset *data, const char *spoil, engine_row *rows,
                           int max)
{
    int count = 0;
    for (int k = 0; k < TECHNIQUE_TABLE_MAX && technique_table[k]; k++) {
        const technique *t = technique_table[k];
        for (int v = 0; (!chosen || chosen[k]) && t->variants[v] && count < max; v++)
            rows[count++] = (engine_row){t, v, NULL, data, data->name, technique_named(t, spoil)};
    }
    return count;
}
