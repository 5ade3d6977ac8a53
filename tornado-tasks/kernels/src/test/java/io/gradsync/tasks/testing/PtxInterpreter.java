package io.gradsync.tasks.testing;

import io.gradsync.tasks.api.HalfFloats;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Test helper: runs one PTX {@code .entry} of the kind the emitter writes for element-wise kernels
 * on the JVM, one thread after the other, so that the structure of generated code (loop bounds,
 * vector lanes, packing, scalar tails) can be checked against the Java method without a GPU.
 *
 * <p>Deliberately small and strict: it knows the instructions those kernels use and fails on any
 * other. Memory is a set of arrays at chosen addresses; an access outside them, or a vector
 * access not aligned to its size, fails the run (a GPU would fault or misread). Floating point
 * follows Java, which is what {@code .rn} PTX arithmetic gives; sequential threads are one legal
 * schedule of kernels whose threads do not communicate.
 */
public final class PtxInterpreter {
    private record Op(String opcode, String[] parts, String[] operands, String guard, boolean negated) {
    }

    private final List<Op> program = new ArrayList<>();
    private final Map<String, Integer> labels = new HashMap<>();
    private final List<String> paramNames = new ArrayList<>();

    /** Memory: arrays at addresses. */
    public static final class Memory {
        private final List<long[]> ranges = new ArrayList<>();
        private final List<byte[]> data = new ArrayList<>();

        /** Places {@code bytes} at {@code address} (which must not overlap another array). */
        public void map(long address, byte[] bytes) {
            for (long[] r : ranges) {
                if (address < r[1] && r[0] < address + bytes.length) {
                    throw new IllegalArgumentException("overlapping arrays");
                }
            }
            ranges.add(new long[]{address, address + bytes.length});
            data.add(bytes);
        }

        private byte[] find(long address, int size, int[] offset) {
            for (int i = 0; i < ranges.size(); i++) {
                long[] r = ranges.get(i);
                if (address >= r[0] && address + size <= r[1]) {
                    offset[0] = (int) (address - r[0]);
                    return data.get(i);
                }
            }
            throw new AssertionError(String.format("access of %d bytes at 0x%x outside every array", size, address));
        }

        long read(long address, int size) {
            int[] off = new int[1];
            byte[] b = find(address, size, off);
            long v = 0;
            for (int k = size - 1; k >= 0; k--) {
                v = (v << 8) | (b[off[0] + k] & 0xFF);
            }
            return v;
        }

        void write(long address, int size, long value) {
            int[] off = new int[1];
            byte[] b = find(address, size, off);
            for (int k = 0; k < size; k++) {
                b[off[0] + k] = (byte) (value >>> (8 * k));
            }
        }
    }

    public PtxInterpreter(String ptx) {
        boolean inParams = false;
        boolean inBody = false;
        for (String raw : ptx.lines().toList()) {
            String line = raw.trim();
            if (line.startsWith("//") || line.isEmpty()) {
                continue;
            }
            if (line.startsWith(".visible .entry")) {
                if (!program.isEmpty() || inParams) {
                    throw new IllegalArgumentException("one entry per module");
                }
                inParams = true;
                continue;
            }
            if (inParams) {
                if (line.equals(")")) {
                    inParams = false;
                } else {
                    String[] words = line.replace(",", "").split("\\s+");
                    paramNames.add(words[words.length - 1]);
                }
                continue;
            }
            if (line.equals("{")) {
                inBody = true;
                continue;
            }
            if (!inBody || line.startsWith(".reg") || line.equals("}")) {
                continue;
            }
            if (line.endsWith(":")) {
                labels.put(line.substring(0, line.length() - 1), program.size());
                continue;
            }
            if (!line.endsWith(";")) {
                throw new IllegalArgumentException("unexpected line: " + line);
            }
            line = line.substring(0, line.length() - 1);
            String guard = null;
            boolean negated = false;
            if (line.startsWith("@")) {
                int sp = line.indexOf(' ');
                guard = line.substring(1, sp);
                if (guard.startsWith("!")) {
                    negated = true;
                    guard = guard.substring(1);
                }
                line = line.substring(sp + 1).trim();
            }
            int sp = line.indexOf(' ');
            String opcode = sp < 0 ? line : line.substring(0, sp);
            String rest = sp < 0 ? "" : line.substring(sp + 1);
            program.add(new Op(opcode, opcode.split("\\."), splitOperands(rest), guard, negated));
        }
    }

    /** Operands split at top-level commas ({@code {a, b}} stays one operand). */
    private static String[] splitOperands(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        StringBuilder cur = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                depth--;
            }
            if (c == ',' && depth == 0) {
                out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (!cur.isEmpty()) {
            out.add(cur.toString().trim());
        }
        return out.toArray(String[]::new);
    }

    /** Number of {@code .param}s; arguments are given as raw bits in this order. */
    public int parameterCount() {
        return paramNames.size();
    }

    /**
     * Runs {@code grid * block} threads, one after the other.
     *
     * @param params raw bits of every parameter (pointer, int, float bits), in declaration order
     */
    public void run(Memory memory, long[] params, int grid, int block) {
        if (params.length != paramNames.size()) {
            throw new IllegalArgumentException("expected " + paramNames.size() + " parameters");
        }
        Map<String, Long> paramValues = new HashMap<>();
        for (int i = 0; i < params.length; i++) {
            paramValues.put(paramNames.get(i), params[i]);
        }
        for (int ctaid = 0; ctaid < grid; ctaid++) {
            for (int tid = 0; tid < block; tid++) {
                thread(memory, paramValues, grid, block, ctaid, tid);
            }
        }
    }

    private void thread(Memory mem, Map<String, Long> params, int grid, int block, int ctaid, int tid) {
        Map<String, Long> regs = new HashMap<>();
        regs.put("%ctaid.x", (long) ctaid);
        regs.put("%ntid.x", (long) block);
        regs.put("%tid.x", (long) tid);
        regs.put("%nctaid.x", (long) grid);
        int pc = 0;
        for (long steps = 0; ; steps++) {
            if (steps > 50_000_000L) {
                throw new AssertionError("thread " + ctaid + "/" + tid + " does not finish");
            }
            Op op = program.get(pc++);
            if (op.guard() != null && (get(regs, op.guard()) != 0) == op.negated()) {
                continue;
            }
            if (op.opcode().equals("ret")) {
                return;
            }
            if (op.opcode().startsWith("bra")) {
                Integer target = labels.get(op.operands()[0]);
                if (target == null) {
                    throw new AssertionError("no label " + op.operands()[0]);
                }
                pc = target;
                continue;
            }
            execute(op, regs, params, mem);
        }
    }

    private static long get(Map<String, Long> regs, String name) {
        Long v = regs.get(name);
        if (v == null) {
            throw new AssertionError("register " + name + " read before it is written");
        }
        return v;
    }

    /** A source operand's bits: a register, or an integer / 0f / 0d immediate. */
    private static long value(Map<String, Long> regs, String operand) {
        if (operand.startsWith("%")) {
            return get(regs, operand);
        } else if (operand.startsWith("0f")) {
            return Long.parseLong(operand.substring(2), 16);
        } else if (operand.startsWith("0d")) {
            return Long.parseUnsignedLong(operand.substring(2), 16);
        }
        return Long.parseLong(operand);
    }

    private static String[] vector(String operand) {
        if (!operand.startsWith("{")) {
            throw new AssertionError("expected a vector operand: " + operand);
        }
        String[] parts = operand.substring(1, operand.length() - 1).split(",");
        for (int i = 0; i < parts.length; i++) {
            parts[i] = parts[i].trim();
        }
        return parts;
    }

    private static long address(Map<String, Long> regs, String operand) {
        String inner = operand.substring(1, operand.length() - 1);
        int plus = inner.indexOf('+');
        return plus < 0 ? get(regs, inner) : get(regs, inner.substring(0, plus)) + Long.parseLong(inner.substring(plus + 1));
    }

    private static int bytes(String type) {
        return switch (type) {
            case "u16", "s16", "b16", "f16" -> 2;
            case "u32", "s32", "b32", "f32" -> 4;
            case "u64", "s64", "b64", "f64" -> 8;
            default -> throw new AssertionError("type " + type);
        };
    }

    /** Bits of a loaded value as the register holds them (s16 sign-extends). */
    private static long extend(String type, long bits) {
        return type.equals("s16") ? (short) bits : bits;
    }

    private static float f(long bits) {
        return Float.intBitsToFloat((int) bits);
    }

    private static long bits(float v) {
        return Float.floatToRawIntBits(v) & 0xFFFF_FFFFL;
    }

    private static double d(long bits) {
        return Double.longBitsToDouble(bits);
    }

    private static long bits(double v) {
        return Double.doubleToRawLongBits(v);
    }

    private static long u32(long v) {
        return v & 0xFFFF_FFFFL;
    }

    private void execute(Op op, Map<String, Long> regs, Map<String, Long> params, Memory mem) {
        String[] o = op.operands();
        String[] parts = op.parts();
        String name = parts[0];
        String type = parts[parts.length - 1];
        switch (name) {
            case "ld" -> {
                if (parts[1].equals("param")) {
                    String p = o[1].substring(1, o[1].length() - 1);
                    regs.put(o[0], params.get(p));
                    return;
                }
                long addr = address(regs, o[1]);
                int size = bytes(type);
                if (o[0].startsWith("{")) {
                    String[] dst = vector(o[0]);
                    checkAligned(addr, size * dst.length);
                    for (int i = 0; i < dst.length; i++) {
                        regs.put(dst[i], extend(type, mem.read(addr + (long) i * size, size)));
                    }
                } else {
                    checkAligned(addr, size);
                    regs.put(o[0], extend(type, mem.read(addr, size)));
                }
            }
            case "st" -> {
                long addr = address(regs, o[0]);
                int size = bytes(type);
                if (o[1].startsWith("{")) {
                    String[] src = vector(o[1]);
                    checkAligned(addr, size * src.length);
                    for (int i = 0; i < src.length; i++) {
                        mem.write(addr + (long) i * size, size, value(regs, src[i]));
                    }
                } else {
                    checkAligned(addr, size);
                    mem.write(addr, size, value(regs, o[1]));
                }
            }
            case "cvta" -> regs.put(o[0], get(regs, o[1]));
            case "mov" -> {
                if (o[0].startsWith("{")) { // unpack
                    String[] dst = vector(o[0]);
                    long v = get(regs, o[1]);
                    int w = bytes(type) * 8 / dst.length;
                    for (int i = 0; i < dst.length; i++) {
                        regs.put(dst[i], (v >>> (w * i)) & ((1L << w) - 1));
                    }
                } else if (o[1].startsWith("{")) { // pack, first element lowest
                    String[] src = vector(o[1]);
                    int w = bytes(type) * 8 / src.length;
                    long v = 0;
                    for (int i = 0; i < src.length; i++) {
                        v |= (value(regs, src[i]) & ((1L << w) - 1)) << (w * i);
                    }
                    regs.put(o[0], v);
                } else {
                    long v = value(regs, o[1]);
                    regs.put(o[0], bytes(type) == 4 ? u32(v) : v);
                }
            }
            case "add", "sub", "mul", "min", "max", "and", "or", "xor", "shl", "shr", "div", "rem" -> arithmetic(name, parts, o, regs);
            case "fma" -> regs.put(o[0], type.equals("f32")
                    ? bits(Math.fma(f(value(regs, o[1])), f(value(regs, o[2])), f(value(regs, o[3]))))
                    : bits(Math.fma(d(value(regs, o[1])), d(value(regs, o[2])), d(value(regs, o[3])))));
            case "mad" -> regs.put(o[0], u32((int) value(regs, o[1]) * (int) value(regs, o[2]) + (int) value(regs, o[3])));
            case "neg" -> regs.put(o[0], switch (type) {
                case "f32" -> bits(-f(value(regs, o[1])));
                case "f64" -> bits(-d(value(regs, o[1])));
                case "s32" -> u32(-(int) value(regs, o[1]));
                default -> -value(regs, o[1]);
            });
            case "bfe" -> {
                long a = u32(value(regs, o[1]));
                int pos = (int) value(regs, o[2]);
                int len = (int) value(regs, o[3]);
                regs.put(o[0], (a >>> pos) & ((1L << len) - 1));
            }
            case "setp" -> regs.put(o[0], compare(parts[1], type, value(regs, o[1]), value(regs, o[2])) ? 1L : 0L);
            case "selp" -> {
                long v = get(regs, o[3]) != 0 ? value(regs, o[1]) : value(regs, o[2]);
                regs.put(o[0], bytes(type) == 4 ? u32(v) : v);
            }
            case "cvt" -> regs.put(o[0], convert(op.opcode(), value(regs, o[1])));
            default -> throw new AssertionError("instruction not interpreted: " + op.opcode());
        }
    }

    private static void checkAligned(long address, int size) {
        if (address % size != 0) {
            throw new AssertionError(String.format("misaligned %d-byte access at 0x%x", size, address));
        }
    }

    private static void arithmetic(String name, String[] parts, String[] o, Map<String, Long> regs) {
        String type = parts[parts.length - 1];
        long a = value(regs, o[1]);
        long b = value(regs, o[2]);
        boolean wide = parts.length > 1 && parts[1].equals("wide");
        long r = switch (type) {
            case "f32" -> bits(switch (name) {
                case "add" -> f(a) + f(b);
                case "sub" -> f(a) - f(b);
                case "mul" -> f(a) * f(b);
                case "div" -> f(a) / f(b);
                default -> throw new AssertionError(name + ".f32");
            });
            case "f64" -> bits(switch (name) {
                case "add" -> d(a) + d(b);
                case "sub" -> d(a) - d(b);
                case "mul" -> d(a) * d(b);
                case "div" -> d(a) / d(b);
                default -> throw new AssertionError(name + ".f64");
            });
            case "s64", "u64", "b64" -> switch (name) {
                case "add" -> a + b;
                case "sub" -> a - b;
                case "mul" -> a * b;
                case "and" -> a & b;
                case "or" -> a | b;
                case "xor" -> a ^ b;
                case "shl" -> a << b;
                case "shr" -> type.equals("s64") ? a >> b : a >>> b;
                default -> throw new AssertionError(name + "." + type);
            };
            default -> { // 32-bit integers
                int x = (int) a;
                int y = (int) b;
                if (wide) {
                    yield (long) x * (long) y; // mul.wide.s32
                }
                yield u32(switch (name) {
                    case "add" -> x + y;
                    case "sub" -> x - y;
                    case "mul" -> x * y;
                    case "min" -> type.equals("u32") ? (Integer.compareUnsigned(x, y) <= 0 ? x : y) : Math.min(x, y);
                    case "max" -> type.equals("u32") ? (Integer.compareUnsigned(x, y) >= 0 ? x : y) : Math.max(x, y);
                    case "and" -> x & y;
                    case "or" -> x | y;
                    case "xor" -> x ^ y;
                    case "shl" -> y >= 32 ? 0 : x << y;
                    case "shr" -> type.equals("s32") ? x >> Math.min(y, 31) : (y >= 32 ? 0 : x >>> y);
                    case "div" -> x / y;
                    case "rem" -> x % y;
                    default -> throw new AssertionError(name + "." + type);
                });
            }
        };
        regs.put(o[0], r);
    }

    private static boolean compare(String cmp, String type, long a, long b) {
        if (type.equals("f32") || type.equals("f64")) {
            double x = type.equals("f32") ? f(a) : d(a);
            double y = type.equals("f32") ? f(b) : d(b);
            boolean unordered = Double.isNaN(x) || Double.isNaN(y);
            if (cmp.equals("nan")) {
                return unordered;
            }
            boolean u = cmp.endsWith("u");
            String c = u ? cmp.substring(0, cmp.length() - 1) : cmp;
            if (unordered) {
                return u;
            }
            int r = Double.compare(x, y) == 0 || x == y ? 0 : (x < y ? -1 : 1);
            return test(c, r);
        }
        int r = switch (type) {
            case "s32" -> Integer.compare((int) a, (int) b);
            case "u32" -> Integer.compareUnsigned((int) a, (int) b);
            case "s64" -> Long.compare(a, b);
            default -> Long.compareUnsigned(a, b);
        };
        return test(cmp, r);
    }

    private static boolean test(String cmp, int r) {
        return switch (cmp) {
            case "eq" -> r == 0;
            case "ne" -> r != 0;
            case "lt" -> r < 0;
            case "le" -> r <= 0;
            case "gt" -> r > 0;
            case "ge" -> r >= 0;
            default -> throw new AssertionError("setp." + cmp);
        };
    }

    private static long convert(String opcode, long a) {
        return switch (opcode) {
            case "cvt.f32.f16" -> bits(Float.float16ToFloat((short) a));
            case "cvt.rn.f16.f32" -> Float.floatToFloat16(f(a)) & 0xFFFFL;
            case "cvt.rn.bf16.f32" -> HalfFloats.floatToBf16(f(a)) & 0xFFFFL;
            case "cvt.u16.u32" -> a & 0xFFFFL;
            case "cvt.s32.s16" -> u32((short) a);
            case "cvt.rn.f32.s32" -> bits((float) (int) a);
            case "cvt.f64.f32" -> bits((double) f(a));
            case "cvt.rn.f32.f64" -> bits((float) d(a));
            case "cvt.rz.f32.f64" -> bits(towardZero(d(a)));
            case "cvt.rn.bf16.f64" -> nearestSixteen(d(a), false);
            case "cvt.rn.f16.f64" -> nearestSixteen(d(a), true);
            case "cvt.s64.s32" -> (long) (int) a;
            case "cvt.u32.u64" -> u32(a);
            default -> throw new AssertionError("conversion not interpreted: " + opcode);
        };
    }

    /** A double to float toward zero, NaN to the canonical NaN, as PTX's cvt.rz does it. */
    private static float towardZero(double d) {
        if (Double.isNaN(d)) {
            return Float.intBitsToFloat(0x7FFF_FFFF);
        }
        float f = (float) d;
        if (Math.abs((double) f) > Math.abs(d)) {
            f = Math.copySign(Math.nextDown(Math.abs(f)), f);
        }
        return f;
    }

    /**
     * A double rounded once to the nearest bf16 or fp16, ties to even: the two 16-bit values around
     * it compared exactly, written apart from the compiler's rounding to odd that it checks.
     */
    private static long nearestSixteen(double d, boolean half) {
        if (Double.isNaN(d)) {
            return 0x7FFF;
        }
        int sign = d < 0 || (d == 0 && 1 / d < 0) ? 0x8000 : 0;
        double m = Math.abs(d);
        int inf = half ? 0x7C00 : 0x7F80;
        if (Double.isInfinite(m)) {
            return sign | inf;
        }
        float t = towardZero(m);
        int lo;
        if (half) {
            lo = Float.floatToFloat16(t) & 0x7FFF;
            if (Float.float16ToFloat((short) lo) > t) {
                lo--;
            }
        } else {
            lo = Float.floatToRawIntBits(t) >>> 16;
        }
        double below = magnitude(lo, half);
        double above = lo + 1 == inf ? (half ? 65536.0 : 0x1p128) : magnitude(lo + 1, half);
        double down = m - below;
        double up = above - m;
        int pick = down < up ? lo : up < down ? lo + 1 : ((lo & 1) == 0 ? lo : lo + 1);
        return sign | pick;
    }

    private static double magnitude(int bits, boolean half) {
        return half ? Float.float16ToFloat((short) bits) : Float.intBitsToFloat(bits << 16);
    }
}
