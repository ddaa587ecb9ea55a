/* A training twin's logic alone, on the reference's kernels (verify/techniques/logic.h). */
#include "verify/techniques/logic.h"

#include "opt/train.h"
#include "ref/nn/compare.h"
#include "verify/techniques/engine.h"

double training_logic_differs(const snapshot_seq *seq, const model_config *config, const train_options *options,
                              comm *group, int64_t epochs, int corrupt, logic_epoch_fn epoch, const void *context,
                              tf_error *err)
{
    const int root = !group || group->rank == 0;
    trainer ref, twin;
    int created = 0;
    double differing = 0;
    int status = trainer_create(&ref, seq, config, options, err);
    created += status == TF_OK;
    if (status == TF_OK && (status = trainer_create(&twin, seq, config, options, err)) == TF_OK)
        created++;
    if (status == TF_OK && group)
        status = opt_trainer_parallel(&twin, group, err); /* the twin's set-up, then its kernels swapped */
    if (status == TF_OK)
        twin.model.kernels = &ref_kernels;
    for (int64_t e = 0; status == TF_OK && e < epochs; e++) {
        if (root)
            status = epoch(context, &ref, 0, err);
        if (status == TF_OK)
            status = epoch(context, &twin, 1, err);
        if (status == TF_OK && corrupt) {
            float *first = twin.model.parameters.items[0].value.data;
            first[0] = technique_spoiled(first[0]);
        }
        if (status == TF_OK && root)
            differing += (double)parameters_differing_values(&twin.model.parameters, &ref.model.parameters);
    }
    if (created > 0)
        trainer_free(&ref);
    if (created > 1)
        trainer_free(&twin);
    return status == TF_OK ? differing : -1;
}
