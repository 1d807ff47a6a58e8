/*
 * JVM stand-in for the Android SDK (API level 34) class of the same name: only the members
 * Herald's glue uses, with the real signatures, behaving as a simple recording fake so the
 * glue's tests can run. Never shipped (herald-android depends on it as provided).
 */
package android.graphics;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

public class BitmapFactory {
    /** The fake decodes anything that starts with the PNG signature; null otherwise, as Android does for non-images. */
    public static Bitmap decodeStream(InputStream is) {
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while ((n = is.read(buf)) != -1) out.write(buf, 0, n);
            byte[] b = out.toByteArray();
            return b.length >= 4 && (b[0] & 0xff) == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G' ? new Bitmap(b) : null;
        } catch (IOException e) {
            return null;
        }
    }
}
