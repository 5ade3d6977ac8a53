package io.gradsync.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.sync.SyncBackend;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The user-side trainer on JVM devices: N replicas on shards follow one replica on the whole batch. */
class OwnMemoryTrainingTest {

    /** Rows of 3 and 5 replicas split the batch of 256 unevenly (86/85/85, 52/51/51/51/51). */
    @ParameterizedTest(name = "{0}, {1} replicas, buckets {2}")
    @CsvSource({"cpu, 2, false", "cpu, 4, false", "cpu, 4, true", "single, 1, false", "auto, 2, true",
        "cpu, 3, false", "cpu, 3, true", "auto, 5, false"})
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

    private record Run(int code, String out, String err) {
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = OwnMemoryTraining.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The README's command with 3 replicas: the batch of 512 splits unevenly, and it trains instead of throwing. */
    @Test
    void threeReplicasTrainOnUnevenShards() {
        Run r = run("--runtime", "jvm", "--devices", "3", "--backend", "cpu", "--steps", "5");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("3 replicas on [jvm:0, jvm:1, jvm:2], own memory"), r.out());
        double diff = Double.parseDouble(r.out().replaceAll("(?s).*from one replica ([-0-9.e+]+).*", "$1"));
        assertTrue(diff < 1e-5, r.out());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "--steps x                          | --steps: 'x' is not a whole number",
        "--steps 0                          | --steps must be at least 1, got 0",
        "--steps=-3                         | --steps must be at least 1, got -3",
        "--steps                            | --steps needs a value",
        "--devices 0                        | --devices must be 1..512 (each replica needs a sample of the batch of 512), got 0",
        "--devices -1                       | --devices must be 1..512 (each replica needs a sample of the batch of 512), got -1",
        "--devices 513                      | --devices must be 1..512 (each replica needs a sample of the batch of 512), got 513",
        "--devices two                      | --devices: 'two' is not a whole number",
        "--backend opencl                   | --backend opencl is not supported here",
        "--backend warp9                    | --backend: unknown sync backend 'warp9'",
        "--backend=                         | --backend: no sync backend given ('')",
        "--backend single --devices 2       | --backend single takes exactly one device",
        "--runtime opencl                   | --runtime opencl is not supported here",
        "--runtime tpu                      | --runtime is jvm or cuda, got 'tpu'",
        "--memory shared                    | --memory is own or buckets, got 'shared'",
        "--frobnicate                       | unknown option '--frobnicate'",
        "--runtime jvm --backend ptx        | --backend ptx on jvm devices: ",
    })
    void badUsageIsOneLineWithExitCode2(String line, String message) {
        Run r = run(line.trim().split("\\s+"));
        assertEquals(2, r.code(), r.out() + r.err());
        assertEquals(1, r.err().lines().count(), r.err());
        assertTrue(r.err().startsWith("OwnMemoryTraining: "), r.err());
        assertTrue(r.err().contains(message), r.err());
        assertEquals("", r.out());
    }

    @Test
    void helpSaysHowUnevenShardsAreWeightedAndWhyNotOpenCl() {
        Run r = run("--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("weighted by its shard's share of the batch"), r.out());
        assertTrue(r.out().contains("Not opencl"), r.out());
    }
}
