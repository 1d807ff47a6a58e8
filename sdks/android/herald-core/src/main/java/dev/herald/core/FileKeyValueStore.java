package dev.herald.core;

import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Properties;

/**
 * A store in one properties file, replaced atomically (written beside it, then renamed) so
 * that a crash mid-write leaves the previous record. Unreadable files count as empty.
 */
public final class FileKeyValueStore implements KeyValueStore {
    private final File file;
    private Properties cache;

    public FileKeyValueStore(File file) {
        this.file = file;
    }

    @Override
    public synchronized String get(String key) {
        return load().getProperty(key);
    }

    @Override
    public synchronized void put(String key, String value) {
        Properties props = load();
        if (value == null) props.remove(key);
        else props.setProperty(key, value);
        File parent = file.getAbsoluteFile().getParentFile();
        if (parent != null && !parent.isDirectory() && !parent.mkdirs()) {
            throw new IllegalStateException("cannot create " + parent);
        }
        File tmp = new File(file.getPath() + ".tmp");
        try {
            try (OutputStream out = new FileOutputStream(tmp)) {
                props.store(out, "Herald");
                ((FileOutputStream) out).getFD().sync();
            }
            if (!tmp.renameTo(file)) {
                // Some file systems do not replace on rename.
                if (!file.delete() || !tmp.renameTo(file)) throw new IOException("cannot replace " + file);
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file, e);
        }
    }

    private Properties load() {
        if (cache != null) return cache;
        Properties props = new Properties();
        if (file.isFile()) {
            try (InputStream in = new FileInputStream(file)) {
                props.load(in);
            } catch (IOException | IllegalArgumentException e) {
                props = new Properties();
            }
        }
        cache = props;
        return props;
    }
}
