package io.gradsync.nccl;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * NCCL's {@code ncclUniqueId}: 128 opaque bytes that rank 0 makes with
 * {@link Nccl#newUniqueId()} and sends to every other rank (over TCP, say) before
 * {@link Nccl#initRank}. Immutable; the bytes are copied in and out.
 */
public final class NcclUniqueId {
    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int SIZE = 128;

    private final byte[] bytes;

    private NcclUniqueId(byte[] bytes) {
        this.bytes = bytes;
    }

    /** Wraps a copy of exactly {@link #SIZE} bytes, as received from rank 0. */
    public static NcclUniqueId of(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        if (bytes.length != SIZE) {
            throw new IllegalArgumentException("an NCCL unique id is " + SIZE + " bytes, got " + bytes.length);
        }
        return new NcclUniqueId(bytes.clone());
    }

    /** Parses the {@link #toHex()} form (256 hex digits), handy for environment variables. */
    public static NcclUniqueId fromHex(String hex) {
        Objects.requireNonNull(hex, "hex");
        if (hex.length() != 2 * SIZE) {
            throw new IllegalArgumentException("an NCCL unique id is " + 2 * SIZE + " hex digits, got " + hex.length());
        }
        return new NcclUniqueId(HexFormat.of().parseHex(hex));
    }

    /** A copy of the 128 bytes, to send to the other ranks. */
    public byte[] toByteArray() {
        return bytes.clone();
    }

    /** The bytes as 256 lower-case hex digits. */
    public String toHex() {
        return HexFormat.of().formatHex(bytes);
    }

    /** The bytes without a copy, for the native call only. */
    byte[] bytes() {
        return bytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NcclUniqueId other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** Shows only a hash: the id lets anyone who holds it join the communicator. */
    @Override
    public String toString() {
        return "NcclUniqueId[hash=" + Integer.toHexString(hashCode()) + "]";
    }
}
