package io.gradsync.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Versions, unique ids and the enums' NCCL values (as in nccl.h). */
class NcclValueTypesTest {

    @Test
    void versionCodesDecodeInBothSchemes() {
        assertEquals("2.28.3", NcclVersion.fromCode(22803).toString());
        assertEquals("2.10.3", NcclVersion.fromCode(21003).toString());
        assertEquals("2.9.6", NcclVersion.fromCode(20906).toString());
        assertEquals("2.7.8", NcclVersion.fromCode(2708).toString());
        assertEquals("2.8.4", NcclVersion.fromCode(2804).toString());
        assertEquals("3.0.1", NcclVersion.fromCode(30001).toString());
        NcclVersion v = NcclVersion.fromCode(22803);
        assertEquals(2, v.major());
        assertEquals(28, v.minor());
        assertEquals(3, v.patch());
        assertEquals(22803, v.code());
        assertTrue(v.isAtLeast(2, 10, 0));
        assertTrue(v.isAtLeast(2, 28, 3));
        assertFalse(v.isAtLeast(2, 28, 4));
        assertTrue(NcclVersion.fromCode(2708).compareTo(NcclVersion.fromCode(20906)) < 0);
        assertThrows(IllegalArgumentException.class, () -> NcclVersion.fromCode(0));
        assertThrows(IllegalArgumentException.class, () -> NcclVersion.fromCode(-22803));
    }

    @Test
    void uniqueIdIsExactly128BytesAndCopied() {
        byte[] raw = new byte[NcclUniqueId.SIZE];
        new Random(7).nextBytes(raw);
        NcclUniqueId id = NcclUniqueId.of(raw);
        raw[0]++;
        assertNotEquals(raw[0], id.toByteArray()[0], "input must be copied");
        byte[] out = id.toByteArray();
        out[1]++;
        assertNotEquals(out[1], id.toByteArray()[1], "output must be copied");
        assertNotSame(id.toByteArray(), id.toByteArray());
        assertEquals(id, NcclUniqueId.of(id.toByteArray()));
        assertEquals(id.hashCode(), NcclUniqueId.of(id.toByteArray()).hashCode());
        assertEquals(id, NcclUniqueId.fromHex(id.toHex()));
        assertArrayEquals(id.toByteArray(), NcclUniqueId.fromHex(id.toHex()).toByteArray());
        assertFalse(id.toString().contains(id.toHex().substring(0, 16)), "toString must not leak the id");

        assertThrows(NullPointerException.class, () -> NcclUniqueId.of(null));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(new byte[127]));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(new byte[129]));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.fromHex("abcd"));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.fromHex("zz".repeat(128)));
    }

    @Test
    void enumsCarryNcclValues() {
        assertEquals(7, NcclDataType.FLOAT32.ncclValue());
        assertEquals(6, NcclDataType.FLOAT16.ncclValue());
        assertEquals(9, NcclDataType.BFLOAT16.ncclValue());
        assertEquals(4, NcclDataType.FLOAT32.byteSize());
        assertEquals(2, NcclDataType.FLOAT16.byteSize());
        assertEquals(2, NcclDataType.BFLOAT16.byteSize());
        assertEquals(0, NcclRedOp.SUM.ncclValue());
        assertEquals(1, NcclRedOp.PROD.ncclValue());
        assertEquals(2, NcclRedOp.MAX.ncclValue());
        assertEquals(3, NcclRedOp.MIN.ncclValue());
        assertEquals(4, NcclRedOp.AVG.ncclValue());
        for (NcclResult r : NcclResult.values()) {
            if (r != NcclResult.UNKNOWN) {
                assertEquals(r, NcclResult.fromCode(r.code()));
            }
        }
        assertEquals(NcclResult.INVALID_USAGE, NcclResult.fromCode(5));
        assertEquals(NcclResult.TIMEOUT, NcclResult.fromCode(8));
        assertEquals(NcclResult.UNKNOWN, NcclResult.fromCode(9));
        assertEquals(NcclResult.UNKNOWN, NcclResult.fromCode(-1));
    }

    @Test
    void exceptionMessageNamesCallCodeAndTexts() {
        NcclException e = new NcclException("ncclAllReduce", 5, "invalid usage", "wrong stream\n");
        assertEquals("ncclAllReduce failed: INVALID_USAGE (5), invalid usage; NCCL last error: wrong stream",
            e.getMessage());
        NcclException notNccl = new NcclException("cuDeviceGet", NcclException.NOT_AN_NCCL_RESULT, "bad ordinal", null);
        assertEquals("cuDeviceGet failed: bad ordinal", notNccl.getMessage());
        assertEquals("", notNccl.lastError());
    }
}
