/* The technique table (bench/technique.h): one line per technique, in chapter order. A new
 * technique adds its files and one line here; demo, verify and the bench program then see it. */
#include "bench/technique.h"

extern const technique technique_train, technique_incremental, technique_fusion_temporal, technique_fusion_spatial,
    technique_dispatch;

const technique *const technique_table[] = {
    &technique_train,            /* 01 the optimized engine: data-parallel training */
    &technique_incremental,      /* 02 ReInc incremental aggregation */
    &technique_fusion_temporal,  /* 03 DGC temporal fusion */
    &technique_fusion_spatial,   /* 03 DGC spatial fusion */
    &technique_dispatch,         /* 04 Sven redundancy-free dispatch */
    NULL,
};
