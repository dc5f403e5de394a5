package io.tidemark.proto.tls;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads a party's TLS files again once they change: each run compares every file's modification time and size with
 * those it last loaded, and when one differs loads them all. A load that fails (a file half written, a key that does
 * not match its certificate yet) leaves the last good material in use, is logged once, and is tried again when the
 * files change again. grpc-java's own reloading ({@code AdvancedTlsX509KeyManager.updateIdentityCredentials} with a
 * period) takes no period under a minute and raises a shorter one to it, which made a rotated certificate wait up to
 * a minute whatever {@code tls.reload.interval.ms} said; this one runs at that interval.
 *
 * <p>Runs on one thread (the material's reload executor).
 */
final class FileReload implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(FileReload.class);

    /** Loads the files into the managers that serve handshakes. */
    interface Load {
        void load() throws IOException, GeneralSecurityException;
    }

    private final String what;
    private final List<Path> files;
    private final Load load;
    private List<String> loaded;
    private List<String> failed = List.of();

    /**
     * Loads the files a first time.
     *
     * @param what names the files, for the log
     * @throws IOException or GeneralSecurityException when they cannot be loaded
     */
    FileReload(String what, List<Path> files, Load load) throws IOException, GeneralSecurityException {
        this.what = what;
        this.files = List.copyOf(files);
        this.load = load;
        this.loaded = signature();
        load.load();
    }

    @Override
    public void run() {
        List<String> now = signature();
        if (now.equals(loaded) || now.equals(failed)) {
            return;
        }
        try {
            load.load();
            loaded = now;
            failed = List.of();
            LOG.info("Loaded {} again: the next handshakes take it", what);
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            failed = now;
            LOG.warn("{} changed but does not load ({}); the last good one stays in use until it changes again", what,
                    e.toString());
        }
    }

    /** Each file's modification time and size, or that it is missing. */
    private List<String> signature() {
        List<String> signature = new ArrayList<>(files.size());
        for (Path file : files) {
            try {
                signature.add(Files.getLastModifiedTime(file) + "/" + Files.size(file));
            } catch (IOException e) {
                signature.add("unreadable: " + e);
            }
        }
        return signature;
    }
}
