package dev.interlock.file.internal;

import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.spi.AbstractInterruptibleChannel;

/**
 * Lets {@link Thread#interrupt()} end the leader's poll(2): the JDK calls {@link
 * #implCloseChannel} of a channel whose blocking operation the interrupted thread is in,
 * which writes the eventfd. (A thread in a native call cannot be interrupted otherwise.)
 */
final class PollInterruptor extends AbstractInterruptibleChannel {
    private final InotifyWatcher watcher;

    PollInterruptor(InotifyWatcher watcher) {
        this.watcher = watcher;
    }

    void enter() {
        begin();
    }

    void exit(boolean completed) throws AsynchronousCloseException {
        end(completed);
    }

    @Override
    protected void implCloseChannel() {
        watcher.kick();
    }
}
