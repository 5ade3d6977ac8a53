package io.gradsync.sync;

/** For tests of what an interrupt does: interrupts a thread from another one after a while. */
public final class Interrupts {
    private Interrupts() {
    }

    /** Interrupts {@code target} {@code millis} from now (from a thread of its own, which ends then). */
    public static void after(Thread target, long millis) {
        Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                return;
            }
            target.interrupt();
        });
    }
}
