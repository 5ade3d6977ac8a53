package io.gradsync.tasks.compiler.ptx;

import io.gradsync.tasks.compiler.ir.IrType;
import io.gradsync.tasks.compiler.ir.Var;

import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/**
 * The body of one {@code .entry} as it is written, and its virtual registers: every IR variable
 * gets one register for the whole kernel, every temporary a fresh one; ptxas does the real
 * allocation. Shared by the parts of the PTX emitter, so that registers are numbered in the
 * order instructions are written.
 */
final class PtxWriter {
    private final StringBuilder out = new StringBuilder();
    private final EnumMap<RegClass, Integer> regCount = new EnumMap<>(RegClass.class);
    private final Map<Integer, String> varRegs = new HashMap<>();

    String fresh(RegClass c) {
        int n = regCount.merge(c, 1, Integer::sum);
        return c.prefix + n;
    }

    String fresh(IrType t) {
        return fresh(RegClass.of(t));
    }

    /** The register of an IR variable. */
    String reg(Var v) {
        return varRegs.computeIfAbsent(v.id(), id -> fresh(v.type()));
    }

    /** One instruction. */
    void line(String s) {
        out.append('\t').append(s).append(";\n");
    }

    void label(String name) {
        out.append(name).append(":\n");
    }

    /** Text as it is (the entry's closing brace). */
    void raw(String s) {
        out.append(s);
    }

    /** The {@code .reg} declarations of every register handed out. */
    String registerDeclarations() {
        StringBuilder decls = new StringBuilder();
        for (RegClass c : RegClass.values()) {
            Integer n = regCount.get(c);
            if (n != null) {
                decls.append("\t.reg ").append(c.decl).append(' ').append(c.prefix).append('<').append(n + 1).append(">;\n");
            }
        }
        return decls.toString();
    }

    /** The instructions written so far. */
    String text() {
        return out.toString();
    }
}
