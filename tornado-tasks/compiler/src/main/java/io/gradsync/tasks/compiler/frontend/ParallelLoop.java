package io.gradsync.tasks.compiler.frontend;

/** The @Parallel loop of the kernel method: its induction slot, init store, increment and extent, as bytecode offsets. */
record ParallelLoop(int slot, int initStoreBci, int incrementBci, int startBci, int endBci) {
    boolean contains(int bci) {
        return bci >= startBci && bci < endBci;
    }
}
