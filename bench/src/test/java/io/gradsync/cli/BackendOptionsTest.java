package io.gradsync.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.gradsync.sync.CpuOptions;
import io.gradsync.sync.NcclOptions;
import io.gradsync.sync.OpenClOptions;
import io.gradsync.sync.PtxOptions;
import io.gradsync.sync.SyncOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Each backend's mixin makes that backend's options record and touches no other backend's. */
class BackendOptionsTest {

    @Test
    void eachMixinMakesItsBackendsRecord() {
        CpuOptionsMixin cpu = new CpuOptionsMixin();
        cpu.chunk = "4M";
        cpu.threads = 3;
        assertEquals(CpuOptions.defaults().withChunkBytes(4 << 20).withThreads(3), cpu.apply(CpuOptions.defaults()));

        PtxOptionsMixin ptx = new PtxOptionsMixin();
        ptx.ptxOneShot = "0";
        ptx.ptxOneGpu = "256K";
        ptx.ptxNoGraph = true;
        assertEquals(PtxOptions.defaults().withOneShotMaxBytes(0).withOneGpuMaxBytes(256 << 10).withGraph(false),
                ptx.apply(PtxOptions.defaults()));

        OpenClOptionsMixin openCl = new OpenClOptionsMixin();
        openCl.openClStep = "8M";
        assertEquals(new OpenClOptions(8 << 20), openCl.apply(OpenClOptions.defaults()));

        NcclOptionsMixin nccl = new NcclOptionsMixin();
        nccl.layoutCheck = "on-change";
        nccl.timeoutSeconds = 30;
        assertEquals(new NcclOptions(Duration.ofSeconds(30), SyncOptions.LayoutCheck.ON_CHANGE), nccl.apply(NcclOptions.defaults()));

        SyncOptions all = SyncOptions.defaults();
        for (BackendOptions<?> b : new BackendOptions<?>[] {cpu, ptx, openCl, nccl}) {
            all = b.applyTo(all);
        }
        assertEquals(new SyncOptions(cpu.apply(CpuOptions.defaults()), ptx.apply(PtxOptions.defaults()),
                openCl.apply(OpenClOptions.defaults()), nccl.apply(NcclOptions.defaults()), true), all);
    }

    @Test
    void nothingGivenChangesNothingAndABadValueNamesItsOption() {
        SyncOptions o = SyncOptions.defaults().withSlots(5);
        assertEquals(o, new CpuOptionsMixin().applyTo(o));
        assertSame(o.ptx(), new PtxOptionsMixin().apply(o.ptx()));
        CpuOptionsMixin cpu = new CpuOptionsMixin();
        cpu.slots = 1;
        assertEquals("--slots: slots must be >= 2 so that copies overlap the sum, got 1",
                assertThrows(IllegalArgumentException.class, () -> cpu.apply(CpuOptions.defaults())).getMessage());
    }
}
