package io.gradsync.nccl;

/**
 * An NCCL version decoded from {@code ncclGetVersion}'s code. NCCL encodes versions up to
 * 2.8 as {@code major*1000 + minor*100 + patch} and later ones as
 * {@code major*10000 + minor*100 + patch} (the {@code NCCL_VERSION} macro in nccl.h).
 *
 * @param major major version
 * @param minor minor version
 * @param patch patch level
 * @param code  the raw {@code NCCL_VERSION_CODE}
 */
public record NcclVersion(int major, int minor, int patch, int code) implements Comparable<NcclVersion> {

    public NcclVersion {
        if (major < 0 || minor < 0 || patch < 0 || minor > 99 || patch > 99) {
            throw new IllegalArgumentException("bad NCCL version " + major + "." + minor + "." + patch);
        }
    }

    /** Decodes {@code NCCL_VERSION_CODE}, e.g. 22803 as 2.28.3 and 2708 as 2.7.8. */
    public static NcclVersion fromCode(int code) {
        if (code <= 0) {
            throw new IllegalArgumentException("NCCL version code must be positive: " + code);
        }
        // Old scheme codes are below 10000 (2.8.x is 28xx); new ones start at 2.9.0 = 20900.
        if (code < 10000) {
            return new NcclVersion(code / 1000, code % 1000 / 100, code % 100, code);
        }
        return new NcclVersion(code / 10000, code % 10000 / 100, code % 100, code);
    }

    /** True where this version is {@code major.minor.patch} or later. */
    public boolean isAtLeast(int major, int minor, int patch) {
        return compareTo(new NcclVersion(major, minor, patch, 0)) >= 0;
    }

    @Override
    public int compareTo(NcclVersion o) {
        int c = Integer.compare(major, o.major);
        if (c == 0) {
            c = Integer.compare(minor, o.minor);
        }
        return c != 0 ? c : Integer.compare(patch, o.patch);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}
