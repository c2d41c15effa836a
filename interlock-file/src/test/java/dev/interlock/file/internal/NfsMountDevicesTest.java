package dev.interlock.file.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.interlock.Mode;
import org.junit.jupiter.api.Test;

/**
 * Issue 32: with {@code ?network=allow}, {@code status} said "free" through a second NFS mount of
 * the same share on the same host: that mount has its own device number, and /proc/locks names
 * the lock by the device of the mount it was taken through.
 */
class NfsMountDevicesTest {
    static final String MOUNTINFO = String.join(
            "\n",
            "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
            "40 22 0:52 / /mnt/a rw,relatime shared:20 - nfs4 srv:/export rw,vers=4.2,acregmin=3",
            "41 22 0:53 / /mnt/b rw,relatime shared:21 - nfs4 srv:/export rw,vers=4.2,actimeo=3",
            "42 22 0:54 / /mnt/c rw,relatime shared:22 - nfs4 srv:/other rw,vers=4.2",
            "43 22 0:55 /sub /mnt/d rw,relatime shared:23 - nfs4 srv:/export rw,vers=4.2",
            "44 22 0:56 / /mnt/e rw,relatime - nfs srv:/export rw,vers=3",
            "45 22 0:57 / /mnt/f rw,relatime - tmpfs srv:/export rw",
            "");

    @Test
    void sameShare_isEveryNfsMountWithTheSameSourceAndRoot() {
        assertThat(NfsMountDevices.sameShare(0, 52, MOUNTINFO))
                .containsExactly(NfsMountDevices.device(0, 52), NfsMountDevices.device(0, 53));
        assertThat(NfsMountDevices.sameShare(0, 53, MOUNTINFO))
                .containsExactly(NfsMountDevices.device(0, 53), NfsMountDevices.device(0, 52));
    }

    @Test
    void sameShare_ofALocalFileSystem_orAnUnknownDevice_isThatDeviceAlone() {
        assertThat(NfsMountDevices.sameShare(254, 0, MOUNTINFO)).containsExactly(NfsMountDevices.device(254, 0));
        assertThat(NfsMountDevices.sameShare(0, 57, MOUNTINFO)).containsExactly(NfsMountDevices.device(0, 57));
        assertThat(NfsMountDevices.sameShare(9, 9, MOUNTINFO)).containsExactly(NfsMountDevices.device(9, 9));
        assertThat(NfsMountDevices.sameShare(0, 52, "garbage\n1 2 x\n")).containsExactly(NfsMountDevices.device(0, 52));
    }

    @Test
    void flocksOn_aHolderThroughTheOtherMount_isFound_byTheSameInodeNumber() {
        // Locked through /mnt/a (0:52 = 00:34), looked at through /mnt/b (0:53 = 00:35).
        String procLocks =
                "1: FLOCK  ADVISORY  WRITE 4242 00:34:1234 0 EOF\n2: FLOCK  ADVISORY  WRITE 77 00:36:1234 0 EOF\n";
        assertThat(ProcLocks.flocksOn(new long[] {NfsMountDevices.device(0, 53)}, 1234, procLocks))
                .isEmpty();
        assertThat(ProcLocks.flocksOn(NfsMountDevices.sameShare(0, 53, MOUNTINFO), 1234, procLocks))
                .containsExactly(new ProcLocks.Entry(Mode.EXCLUSIVE, 4242, false));
    }
}
