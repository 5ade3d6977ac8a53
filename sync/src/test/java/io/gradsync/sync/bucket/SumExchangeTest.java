package io.gradsync.sync.bucket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.gradsync.sync.DType;
import io.gradsync.sync.GradientSynchronizer;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.SyncBackend;
import io.gradsync.sync.SyncOptions;
import io.gradsync.sync.Synchronizers;
import io.gradsync.sync.backend.ptx.PtxOnJvm;
import io.gradsync.tasks.device.Device;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The exchange of sharded norms' sums between processes, run here with every replica in one
 * process: each replica receives every replica's float64 bit for bit, whatever the backend and the
 * wire (an all-gather copies), NaN payloads, negative zero and subnormals included.
 */
class SumExchangeTest {
    private final List<? extends Device> devices = JvmRuntime.createDevices(3);

    @AfterEach
    void close() {
        devices.forEach(Device::close);
    }

    @ParameterizedTest
    @ValueSource(strings = {"cpu", "cpu, bf16 wire", "ptx schedule"})
    void everyReplicaReceivesEveryBit(String backend) {
        double[][] rounds = {
            {1.0 / 3, -0.0, Double.MIN_VALUE},
            {Double.longBitsToDouble(0x7FF8_0000_DEAD_BEEFL), 1e300, 0x1.fffffffffffffp-1},
        };
        try (GradientSynchronizer sync = synchronizer(backend);
             GradientBuckets buckets = GradientBuckets.builder(devices).sharded(sync).add("w", 100, DType.FP32).build();
             SumExchange exchange = new SumExchange(buckets, 3)) {
            for (double[] local : rounds) {
                double[][] got = exchange.allGather(sync, local);
                for (int r = 0; r < 3; r++) {
                    for (int g = 0; g < 3; g++) {
                        assertEquals(Double.doubleToRawLongBits(local[g]), Double.doubleToRawLongBits(got[r][g]),
                                backend + ": replica " + r + " received replica " + g + "'s sum");
                    }
                }
            }
        }
    }

    private GradientSynchronizer synchronizer(String backend) {
        return switch (backend) {
            case "ptx schedule" -> PtxOnJvm.schedule(devices, PtxOptions.defaults(), true, true);
            case "cpu, bf16 wire" -> Synchronizers.create(SyncBackend.CPU, devices, SyncOptions.defaults().withWire(DType.BF16));
            default -> Synchronizers.create(SyncBackend.CPU, devices);
        };
    }
}
