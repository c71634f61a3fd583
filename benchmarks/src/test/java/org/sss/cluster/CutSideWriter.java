package org.sss.cluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.sss.client.SssClient;
import org.sss.client.internal.ClientInternals;
import org.sss.client.io.BulkIO;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.sss.core.api.Serdes;
import org.sss.core.cluster.ClusterSpec;
import org.sss.core.keys.StoredKeys;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.GetView;
import org.sss.core.proto.PutBatch;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.transport.Connection;
import org.sss.core.transport.Frame;
import org.sss.core.transport.PairBlock;

/**
 * A writer on a host cut off from the others (run in its network namespace): it reaches only
 * the node on its own host, asks it for its membership epoch, and sends it one pair of a
 * partition that node holds, at that epoch, as a client that had not heard of the cut would.
 * Prints the node's answer; exits 0 when the node acknowledged the pair, 3 when it refused it.
 *
 * <p>Arguments: CLUSTER_FILE NODE TABLE KEY VALUE (a long key and a string value).
 */
public final class CutSideWriter {
  private CutSideWriter() {}

  public static void main(String[] args) throws Exception {
    ClusterSpec spec = ClusterSpec.load(Path.of(args[0]));
    int node = Integer.parseInt(args[1]);
    String table = args[2];
    long key = Long.parseLong(args[3]);
    byte[] encoded = Serdes.LONG.encodeKey(key);
    int partition = spec.partitionMap().partitionOf(encoded);
    if (!spec.placement().replicasOf(partition).contains(node)) {
      System.out.println("node " + node + " holds no copy of key " + key + "'s partition " + partition);
      System.exit(2);
    }
    try (SssClient client = SssClient.connect(spec)) {
      Connection c = ClientInternals.channels(client).get(node); // only this node is connected
      Frame<Response> view = c.call(Request.newBuilder().setGetView(GetView.getDefaultInstance())).get(15, TimeUnit.SECONDS);
      long epoch = view.header().getView().getView().getEpoch();
      view.release();
      ByteBuf body = Unpooled.buffer();
      PairBlock.write(body, StoredKeys.storedKey(partition, encoded), Serdes.STRING.encodeValue(args[4]));
      Frame<Response> answer;
      try {
        answer = c.call(Request.newBuilder().setPutBatch(PutBatch.newBuilder().setTable(table).setPairCount(1)
            .setKeyType(BulkIO.textTable().types().key()).setValueType(BulkIO.textTable().types().value())
            .setReplication(spec.replication()).setViewEpoch(epoch)), body).get(15, TimeUnit.SECONDS);
      } catch (java.util.concurrent.ExecutionException e) {
        System.out.println("epoch " + epoch + ": refused: " + e.getCause().getMessage());
        System.exit(3);
        return;
      }
      ErrorCode code = answer.header().getCode();
      System.out.println("epoch " + epoch + ": " + code + " " + answer.header().getMessage());
      answer.release();
      System.exit(code == ErrorCode.OK ? 0 : 3);
    }
  }
}
