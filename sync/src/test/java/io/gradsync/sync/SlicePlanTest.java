package io.gradsync.sync;

import io.gradsync.sync.backend.SlicePlan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gradsync.tasks.device.DeviceBuffer;
import io.gradsync.tasks.jvm.JvmDevice;
import io.gradsync.tasks.jvm.JvmRuntime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How the device backends cut gradients into runs and slices. */
class SlicePlanTest {

    @ParameterizedTest(name = "{0} elements over {1}")
    @CsvSource({"1, 2", "63, 4", "64, 4", "65, 2", "255, 4", "257, 4", "1000003, 3", "4096, 8", "7, 8", "129, 3"})
    void slicesCoverEveryElementOnceInAlignedBlocks(long count, int n) {
        long[] b = SlicePlan.bounds(count, n);
        assertEquals(n + 1, b.length);
        assertEquals(0, b[0]);
        assertEquals(count, b[n]);
        for (int i = 0; i < n; i++) {
            assertTrue(b[i] <= b[i + 1], "slices in order");
            assertTrue(b[i] % SlicePlan.ALIGN_ELEMENTS == 0 || b[i] == count, "slice " + i + " starts on a block");
        }
        long per = b[1] - b[0];
        assertTrue(per * n >= count && per - SlicePlan.ALIGN_ELEMENTS < (count + n - 1) / n,
                "slices as even as whole blocks allow: " + per + " per slice for " + count);
    }

    @Test
    void adjacentGradientsOfOneDtypeMergeIntoOneRunAndOthersDoNot() {
        List<JvmDevice> devices = JvmRuntime.createDevices(2);
        try {
            List<Replica> replicas = new ArrayList<>();
            for (JvmDevice d : devices) {
                DeviceBuffer b = d.allocate(1 << 16);
                replicas.add(Replica.on(d)
                        .add(new Gradient("a", b, 0, 100, DType.FP32))
                        .add(new Gradient("b", b, 400, 28, DType.FP32))     // follows a: merged
                        .add(new Gradient("empty", b, 512, 0, DType.FP32))  // skipped
                        .add(new Gradient("c", b, 512, 10, DType.BF16))     // another dtype: a new run
                        .add(new Gradient("d", b, 1024, 10, DType.BF16))    // a gap: a new run
                        .build());
            }
            SlicePlan plan = SlicePlan.of(replicas);
            assertEquals(3, plan.runs().size());
            assertEquals(128, plan.runs().get(0).count());
            assertEquals(DType.BF16, plan.runs().get(1).dtype());
            assertEquals(1024, plan.runs().get(2).offsets()[1]);
            assertEquals(100 * 4 + 28 * 4 + 10 * 2 + 10 * 2, plan.replicaBytes());
            assertTrue(plan.runs().get(1).packed() % 256 == 0 && plan.runs().get(2).packed() >= plan.runs().get(1).packed() + 20);
            assertTrue(plan.madeFor(new ArrayList<>(replicas)), "equal replica lists reuse the plan");
            List<Replica> other = new ArrayList<>(replicas);
            other.set(1, new Replica(devices.get(1), replicas.get(1).gradients().subList(0, 4)));
            assertFalse(plan.madeFor(other));
        } finally {
            devices.forEach(JvmDevice::close);
        }
    }
}
