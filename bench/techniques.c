/* The technique table (bench/technique.h): one line per technique, in chapter order. A new
 * technique adds its files and one line here; demo, verify and the bench program then see it. */
#include "bench/technique.h"

extern const technique technique_train, technique_incremental, technique_fusion_temporal, technique_fusion_spatial,
    technique_dispatch, technique_async, technique_partition, technique_schedule, technique_hybrid;

const technique *const technique_table[] = {
    &technique_train,            /* 01 the optimized engine: data-parallel training */
    &technique_incremental,      /* 02 ReInc incremental aggregation */
    &technique_fusion_temporal,  /* 03 DGC temporal fusion */
    &technique_fusion_spatial,   /* 03 DGC spatial fusion */
    &technique_dispatch,         /* 04 Sven redundancy-free dispatch */
    &technique_async,            /* 05 asynchronous and stale updates (DynaHB averaging, Sven staleness) */
    &technique_partition,        /* 06 vertex partitioning: DynaHB cache, exchange mode, the partitioners */
    &technique_schedule,         /* 07 DyGNeX schedules */
    &technique_hybrid,           /* 07 DynaHB hybrid batches and their reservoir */
    NULL,
};
