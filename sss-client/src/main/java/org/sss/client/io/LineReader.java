package org.sss.client.io;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Reads lines as raw bytes, ending at {@code \n}, {@code \r\n} or a lone {@code \r} — the same
 * line ends as Hadoop's {@code LineReader} — so text loads byte for byte as Hadoop sees it,
 * whatever its encoding. Line ends are not part of the line; lines may be of any length.
 */
public final class LineReader implements AutoCloseable {
  private final InputStream in;
  private final byte[] buf = new byte[1 << 16];
  private int pos;
  private int limit;
  private byte[] line = new byte[256];
  private int lineLength;
  private boolean pendingCr;

  public LineReader(InputStream in) {
    this.in = in;
  }

  /** The next line, or null at the end of the input. */
  public byte[] next() throws IOException {
    lineLength = 0;
    boolean sawAny = false;
    while (true) {
      if (pos == limit) {
        limit = in.read(buf, 0, buf.length);
        pos = 0;
        if (limit <= 0) {
          limit = 0;
          return sawAny ? Arrays.copyOf(line, lineLength) : null;
        }
      }
      if (pendingCr) {
        pendingCr = false;
        if (buf[pos] == '\n') {
          pos++;
          continue;
        }
      }
      int start = pos;
      while (pos < limit && buf[pos] != '\n' && buf[pos] != '\r') {
        pos++;
      }
      append(start, pos - start);
      sawAny = true;
      if (pos < limit) {
        pendingCr = buf[pos] == '\r';
        pos++;
        return Arrays.copyOf(line, lineLength);
      }
    }
  }

  private void append(int from, int n) {
    if (lineLength + n > line.length) {
      line = Arrays.copyOf(line, Math.max(line.length * 2, lineLength + n));
    }
    System.arraycopy(buf, from, line, lineLength, n);
    lineLength += n;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
