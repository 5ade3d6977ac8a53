package io.gradsync.tasks.internal;

/**
 * One implementation of an access interface, installed once by the package that owns the
 * non-public members it reaches (from that package's static initializer) and used by gradsync's
 * other packages: how internals cross packages without becoming exported API.
 *
 * @param <A> the access interface
 */
public final class Installed<A> {
    private final String what;
    private final Class<?> installer;
    private volatile A access;

    /**
     * @param what      what is reached, for the error of a second installation
     * @param installer the class whose static initializer installs it (initialized on first use)
     */
    public Installed(String what, Class<?> installer) {
        this.what = what;
        this.installer = installer;
    }

    /** Called once, by the owning package. */
    public synchronized void install(A implementation) {
        if (access != null) {
            throw new IllegalStateException(what + " access is installed already");
        }
        access = implementation;
    }

    /** The implementation, initializing the installer first where nothing has yet. */
    public A get() {
        A a = access;
        if (a == null) {
            try {
                Class.forName(installer.getName(), true, installer.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = access;
        }
        return a;
    }
}
