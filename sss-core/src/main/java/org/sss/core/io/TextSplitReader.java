package org.sss.core.io;

import java.io.EOFException;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads the lines of one split of a text file, as Hadoop's {@code TextInputFormat} does: a line
 * belongs to the split its first byte is in, so the splits of a file, read each on its own, give
 * every line exactly once, however they cut through lines. A split that starts inside a line
 * skips to the next line's start; its last line may run past its end.
 *
 * <p>Lines end at {@code \n}, {@code \r\n} or a lone {@code \r} (Hadoop's {@code LineReader});
 * the ends are not part of the line. A line's key is the offset of its first byte in the file.
 * A final line without an end counts; a file that ends with a line end has no empty line after it.
 */
public final class TextSplitReader {
  private static final int BUFFER = 1 << 20;
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long LF = '\n' * ONES;
  private static final long CR = '\r' * ONES;

  private final FileChannel file;
  private final long end;
  private final long fileSize;
  private final ByteBuffer buffer;
  private final byte[] buf;
  private final int maxLineBytes;
  /** File offset of {@code buf[0]}. */
  private long bufStart;
  private int pos;
  private int limit;
  private byte[] line = new byte[256];
  private int lineLength;
  private long lineOffset = -1;
  private boolean started;
  private final long start;

  /**
   * Lines of {@code [start, start + length)} of {@code file}, whose size was {@code fileSize}
   * when the splits were made (a file that shrank since fails when its end is read). A line of
   * more than {@code maxLineBytes} fails the read, naming where it starts: a file without line
   * ends (binary data) would otherwise be held whole in memory.
   */
  public TextSplitReader(FileChannel file, long start, long length, long fileSize, int maxLineBytes) {
    this(file, start, length, fileSize, maxLineBytes, BUFFER);
  }

  /** With a read buffer of {@code bufferBytes} (tests cut lines across tiny buffers). */
  TextSplitReader(FileChannel file, long start, long length, long fileSize, int maxLineBytes, int bufferBytes) {
    this.buffer = ByteBuffer.allocate(bufferBytes);
    this.buf = buffer.array();
    this.maxLineBytes = maxLineBytes;
    if (start < 0 || length < 0 || start + length > fileSize) {
      throw new IllegalArgumentException("split [" + start + ", " + (start + length) + ") outside a file of "
          + fileSize + " bytes");
    }
    this.file = file;
    this.start = start;
    this.end = start + length;
    this.fileSize = fileSize;
    this.bufStart = start;
  }

  /** Moves to the next line of the split; false when there is none. */
  public boolean next() throws IOException {
    if (!started) {
      started = true;
      skipToFirstLine();
    }
    long at = bufStart + pos;
    if (at >= end || at >= fileSize) {
      return false;
    }
    lineOffset = at;
    lineLength = 0;
    while (true) {
      int from = pos;
      pos = lineEnd(buf, pos, limit);
      append(from, pos - from);
      if (pos < limit) {
        byte terminator = buf[pos++];
        if (terminator == '\r' && peek() == '\n') {
          pos++;
        }
        return true;
      }
      if (!fill()) {
        return true; // the file's last line, without an end
      }
    }
  }

  /** The file offset of the current line's first byte: its key. */
  public long offset() {
    return lineOffset;
  }

  /** A copy of the current line, without its end. */
  public byte[] line() {
    return Arrays.copyOf(line, lineLength);
  }

  /**
   * The current line decoded as UTF-8, as the string serde decodes a line's bytes (malformed bytes
   * become U+FFFD), without the copy {@link #line()} makes first.
   */
  public String lineString() {
    return new String(line, 0, lineLength, StandardCharsets.UTF_8);
  }

  public int lineLength() {
    return lineLength;
  }

  /**
   * Positions at the first line that starts at or after {@code start}: {@code start} itself when
   * the byte before it ends a line (a {@code \r} only when no {@code \n} follows it, which would
   * make {@code start} the middle of a {@code \r\n}).
   */
  private void skipToFirstLine() throws IOException {
    if (start == 0) {
      fill();
      return;
    }
    bufStart = start - 1;
    pos = 0;
    limit = 0;
    if (!fill()) {
      return;
    }
    byte before = buf[pos++];
    if (before == '\n' || before == '\r' && peek() != '\n') {
      return;
    }
    while (true) {
      pos = lineEnd(buf, pos, limit);
      if (pos < limit) {
        byte terminator = buf[pos++];
        if (terminator == '\r' && peek() == '\n') {
          pos++;
        }
        return;
      }
      if (!fill()) {
        return;
      }
    }
  }

  /**
   * The index of the first {@code \n} or {@code \r} in {@code b[from, limit)}, or {@code limit}.
   * Eight bytes at a time: a byte-by-byte loop over a GiB of text was about a twentieth of a
   * WordCount's CPU (its lines are 650 bytes long on average).
   */
  static int lineEnd(byte[] b, int from, int limit) {
    int i = from;
    for (; i + Long.BYTES <= limit; i += Long.BYTES) {
      long word = (long) LONGS.get(b, i);
      long ends = zeroBytes(word ^ LF) | zeroBytes(word ^ CR);
      if (ends != 0) {
        return i + (Long.numberOfTrailingZeros(ends) >>> 3);
      }
    }
    while (i < limit && b[i] != '\n' && b[i] != '\r') {
      i++;
    }
    return i;
  }

  /**
   * The high bit of each zero byte of {@code v}, exact for the lowest zero byte (a borrow can mark
   * a byte above it too, which the caller, taking the lowest, never reads).
   */
  private static long zeroBytes(long v) {
    return (v - ONES) & ~v & HIGHS;
  }

  /** The next byte without consuming it, or -1 at the end of the file. */
  private int peek() throws IOException {
    if (pos == limit && !fill()) {
      return -1;
    }
    return buf[pos];
  }

  /** Reads the next buffer of the file after what was consumed; false at its end. */
  private boolean fill() throws IOException {
    bufStart += pos;
    pos = 0;
    limit = 0;
    if (bufStart >= fileSize) {
      return false;
    }
    buffer.clear();
    buffer.limit((int) Math.min(buf.length, fileSize - bufStart));
    while (buffer.hasRemaining()) {
      int n = file.read(buffer, bufStart + buffer.position());
      if (n < 0) {
        throw new EOFException("the file ended at byte " + (bufStart + buffer.position()) + ", but had "
            + fileSize + " bytes when it was cut into splits: it changed while it was read");
      }
    }
    limit = buffer.position();
    return true;
  }

  private void append(int from, int n) throws IOException {
    if ((long) lineLength + n > maxLineBytes) {
      throw new IOException("the line at byte " + lineOffset + " is longer than " + maxLineBytes
          + " bytes (is the file text?)");
    }
    if (lineLength + n > line.length) {
      line = Arrays.copyOf(line, (int) Math.min(maxLineBytes, Math.max(2L * line.length, lineLength + n)));
    }
    System.arraycopy(buf, from, line, lineLength, n);
    lineLength += n;
  }
}
