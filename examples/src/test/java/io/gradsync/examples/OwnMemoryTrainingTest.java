package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.SyncBackend;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The user-side trainer on JVM devices: N replicas on shards follow one replica on the whole batch. */
class OwnMemoryTrainingTest {

    @ParameterizedTest(name = "{0}, {1} replicas, buckets {2}")
    @CsvSource({"cpu, 2, false", "cpu, 4, false", "cpu, 4, true", "single, 1, false", "auto, 2, true"})
    void replicasOnShardsFollowOneReplicaOnTheBatch(String backend, int n, boolean buckets) {
        List<? extends Device> devices = JvmRuntime.createDevices(n);
        try {
            OwnMemoryTraining.Result r = OwnMemoryTraining.train(
                    new OwnMemoryTraining.Config(SyncBackend.parse(backend), devices, buckets, 30, 128, 256, 7));
            assertTrue(r.maxDifferenceFromOneReplica() < 1e-5, () -> "differs by " + r.maxDifferenceFromOneReplica());
            assertTrue(r.loss() < r.initialLoss() / 2, () -> "loss " + r.loss() + " from " + r.initialLoss() + ": it did not learn");
        } finally {
            devices.forEach(Device::close);
        }
    }
}
