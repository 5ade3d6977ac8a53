package io.gradsync.sync.bucket;

import io.gradsync.sync.Gradient;
import io.gradsync.sync.Replica;
import java.util.ArrayList;
import java.util.List;

/** The replicas one call of {@link BucketSync} averages a batch of ready buckets through. */
final class BatchReplicas {
    private BatchReplicas() {
    }

    /**
     * One replica per device holding {@code batch} (in bucket order) as few ranges as possible: buckets lie back to
     * back, so consecutive ones of one dtype are averaged as one range, one collective, as if the
     * model were one flat buffer.
     */
    static List<Replica> ranges(GradientBuckets buckets, List<Integer> batch) {
        if (batch.size() == 1) {
            return buckets.bucketReplicas(batch.getFirst());
        }
        List<List<Replica>> spans = new ArrayList<>();
        int first = batch.getFirst();
        for (int i = 1; i <= batch.size(); i++) {
            if (i == batch.size() || batch.get(i) != batch.get(i - 1) + 1
                    || buckets.buckets().get(batch.get(i)).dtype() != buckets.buckets().get(first).dtype()) {
                spans.add(buckets.spanReplicas(first, batch.get(i - 1)));
                first = i < batch.size() ? batch.get(i) : -1;
            }
        }
        if (spans.size() == 1) {
            return spans.getFirst();
        }
        List<Replica> out = new ArrayList<>();
        for (int r = 0; r < buckets.devices().size(); r++) {
            List<Gradient> grads = new ArrayList<>(spans.size());
            for (List<Replica> span : spans) {
                grads.add(span.get(r).gradients().getFirst());
            }
            out.add(new Replica(buckets.devices().get(r), grads));
        }
        return out;
    }

    /** One replica per device holding each bucket of {@code batch} as its own gradient, in batch order (one sum of squares each). */
    static List<Replica> perBucket(GradientBuckets buckets, List<Integer> batch) {
        List<Replica> out = new ArrayList<>();
        for (int r = 0; r < buckets.devices().size(); r++) {
            List<Gradient> grads = new ArrayList<>(batch.size());
            for (int b : batch) {
                grads.add(buckets.bucketReplicas(b).get(r).gradients().getFirst());
            }
            out.add(new Replica(buckets.devices().get(r), grads));
        }
        return out;
    }
}
