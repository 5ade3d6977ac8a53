package io.gradsync.tasks.jvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gradsync.tasks.device.DeviceStream;
import io.gradsync.tasks.device.HostBuffer;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code JvmDevice.wrap(address, bytes)}: live memory is wrapped in place; a wrong address is an exception, never a crash. */
class JvmWrapAddressTest {
    private JvmDevice device;

    @BeforeEach
    void open() {
        assumeTrue(Files.isReadable(Path.of("/proc/self/maps")), "no /proc/self/maps here: wrap(address, bytes) refuses to guess");
        device = JvmRuntime.createDevices(1).getFirst();
    }

    @AfterEach
    void close() {
        if (device != null) {
            device.close();
        }
    }

    @Test
    void liveMemoryIsWrappedInPlace() {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment owned = arena.allocate(4096, 64);
            for (int i = 0; i < 1024; i++) {
                owned.setAtIndex(ValueLayout.JAVA_FLOAT, i, i * 0.5f);
            }
            JvmBuffer b = device.wrap(owned.address() + 64, 1024);
            assertEquals(1024, b.byteSize());
            assertFalse(b.isOwned(), "the owner frees it");
            try (HostBuffer host = device.allocateHost(1024); DeviceStream s = device.createStream()) {
                s.copyToHost(b, 0, host, 0, 1024);
                s.synchronize();
                assertEquals(-1, host.segment().mismatch(owned.asSlice(64, 1024)), "the same bytes, no copy");
                host.segment().setAtIndex(ValueLayout.JAVA_FLOAT, 0, -7f);
                s.copyFromHost(host, 0, b, 0, 4);
                s.synchronize();
                assertEquals(-7f, owned.getAtIndex(ValueLayout.JAVA_FLOAT, 16), "writes land in the owner's memory");
            }
            b.close();
            assertEquals(-7f, owned.getAtIndex(ValueLayout.JAVA_FLOAT, 16), "closing the buffer leaves the memory alone");
        }
    }

    @Test
    void badAddressesAndSizesAreRefusedByName() {
        assertMessage(0, 64, "the address is null");
        assertMessage(0x10_0000, 0, "the size must be positive");
        assertMessage(0x10_0000, -8, "the size must be positive");
        assertMessage(-64, 128, "runs past the end of the address space");
        assertMessage(0x10, 64, "byte 0x10 is not mapped in this process");
    }

    @Test
    void memoryThatIsNotWritableOrRunsIntoAGapIsRefused() throws IOException {
        List<long[]> maps = Files.readAllLines(Path.of("/proc/self/maps")).stream().map(l -> {
            String[] range = l.substring(0, l.indexOf(' ')).split("-");
            boolean rw = l.charAt(l.indexOf(' ') + 1) == 'r' && l.charAt(l.indexOf(' ') + 2) == 'w';
            return new long[] {Long.parseUnsignedLong(range[0], 16), Long.parseUnsignedLong(range[1], 16), rw ? 1 : 0};
        }).toList();
        long[] readOnly = maps.stream().filter(m -> m[2] == 0).findFirst().orElseThrow();
        assertMessage(readOnly[0], 16, "not readable and writable");
        for (int i = 0; i + 1 < maps.size(); i++) {
            long[] m = maps.get(i);
            if (m[2] == 1 && maps.get(i + 1)[0] > m[1]) { // a writable mapping with a gap after it
                assertMessage(m[1] - 16, 64, "byte 0x" + Long.toHexString(m[1]) + " is not mapped in this process");
                return;
            }
        }
        throw new AssertionError("no writable mapping followed by a gap in /proc/self/maps");
    }

    private void assertMessage(long address, long bytes, String fragment) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> device.wrap(address, bytes));
        assertTrue(e.getMessage().contains(fragment) && e.getMessage().contains("for jvm:0"), e.getMessage());
    }
}
