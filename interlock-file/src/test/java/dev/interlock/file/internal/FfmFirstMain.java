package dev.interlock.file.internal;

/** For {@link NativesPathTest}: a process that initialises the FFM class before Libc, then prints the path Libc chose. */
public final class FfmFirstMain {
    private FfmFirstMain() {}

    public static void main(String[] args) throws Exception {
        Class.forName(Libc.FFM_CLASS); // a constant: does not initialise Libc
        System.out.println(Libc.NATIVES.name());
    }
}
