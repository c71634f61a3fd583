package org.sss.client.job;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.sss.client.SssClient;
import org.sss.client.TableSpec;
import org.sss.client.internal.ClientInternals;
import org.sss.client.internal.NodeChannels;
import org.sss.client.internal.WireTypes;
import org.sss.core.cluster.JobTables;
import org.sss.core.proto.AbortJob;
import org.sss.core.proto.ClusterView;
import org.sss.core.proto.CommitJob;
import org.sss.core.proto.CreateTable;
import org.sss.core.proto.ErrorCode;
import org.sss.core.proto.Request;
import org.sss.core.proto.Response;
import org.sss.core.proto.TableOptions;
import org.sss.core.transport.Frame;
import org.sss.core.transport.SssException;

/**
 * A new table that a client fills under a name of a job's namespace and then publishes whole
 * under the name the user asked for, as a job's output is: a load sent from a client that fails,
 * or whose client dies, leaves no table holding part of the file.
 *
 * <p>The table is made with a job id, over the client's connections: the name the user asked for
 * is reserved on every node until the commit, and a node whose connection to this client closes
 * (the client died) drops the table and releases the name, as it does for a job whose coordinator
 * died. {@link #publish} is the job's commit round (one synced catalog write per node); {@link
 * #close} before it aborts, which drops the table everywhere.
 *
 * <p>Limits: the commit is bound to the membership read at creation (a replicated cluster whose
 * view changes meanwhile refuses it), a node that restarts drops the table, and a key written
 * twice by writers that resend may keep either value: for loads of unique keys, on one copy.
 */
public final class StagedTable implements AutoCloseable {
  private final NodeChannels channels;
  private final String table;
  private final String id;
  private final List<Integer> nodes = new ArrayList<>();
  private final long epoch;
  private boolean published;

  private StagedTable(SssClient client, String table) {
    this.channels = ClientInternals.channels(client);
    this.table = table;
    this.id = Jobs.newId();
    ClusterView view = channels.spec().replication() > 1 ? ClientInternals.view(client).getView()
        : ClusterView.getDefaultInstance();
    if (view.getDownCount() > 0 || view.getJoiningCount() > 0) {
      throw new SssException(ErrorCode.NOT_SERVING, "cannot make table '" + table + "': node(s) "
          + (view.getDownCount() > 0 ? view.getDownList() + " down " : "")
          + (view.getJoiningCount() > 0 ? view.getJoiningList() + " catching up " : "")
          + "(membership epoch " + view.getEpoch() + "); nothing was created");
    }
    for (int node = 0; node < channels.spec().nodeCount(); node++) {
      if (!view.getOutList().contains(node)) {
        nodes.add(node);
      }
    }
    this.epoch = view.getEpoch();
  }

  /**
   * Makes the staged table of {@code spec}, to be published as {@code table} (which must not
   * exist, and which nobody else can create meanwhile).
   */
  public static StagedTable create(SssClient client, String table, TableSpec spec) {
    StagedTable s = new StagedTable(client, table);
    try {
      s.createEverywhere(spec);
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
    return s;
  }

  private void createEverywhere(TableSpec spec) {
    int replication = channels.spec().replication();
    TableOptions options = WireTypes.toProto(spec).toBuilder()
        .setReplication(replication == 1 ? 0 : replication) // one copy: the field's default
        .build();
    CreateTable create = CreateTable.newBuilder()
        .setTable(name())
        .setJobId(id)
        .setOptions(options)
        .setCommitAs(table)
        .setCommitReplaces(false)
        .build();
    awaitAll(send(Request.newBuilder().setCreateTable(create)));
  }

  /** The name to write the pairs to until {@link #publish}. */
  public String name() {
    return JobTables.stageOutput(id, 0);
  }

  /**
   * Makes the table visible under its name, on every node; it must then hold what was written to
   * {@link #name} (written and acknowledged: a bulk writer closed). A failure here may leave the
   * table published on some nodes only, which {@code table list} marks incomplete; the error
   * says so.
   */
  public void publish() {
    List<CompletableFuture<Frame<Response>>> commits = send(Request.newBuilder().setCommitJob(CommitJob.newBuilder()
        .setJobId(id).setViewEpoch(epoch)));
    List<Integer> committed = new ArrayList<>();
    RuntimeException first = null;
    for (int i = 0; i < nodes.size(); i++) {
      try {
        Frame<Response> r = NodeChannels.await(commits.get(i), SssClient.DEFAULT_TIMEOUT);
        long renamed = r.header().getAck().getPairs();
        r.release();
        if (renamed != 1) {
          throw new SssException(ErrorCode.NO_SUCH_TABLE, "node " + nodes.get(i) + " published " + renamed
              + " table(s), not 1: it lost the table being filled (did it restart?)");
        }
        committed.add(nodes.get(i));
      } catch (RuntimeException e) {
        first = first != null ? first : NodeChannels.unwrap(e);
      }
    }
    if (first != null) {
      throw new SssException(first instanceof SssException s ? s.code() : ErrorCode.INTERNAL,
          "table '" + table + "' could not be published: " + first.getMessage()
              + (committed.isEmpty() ? "; nothing was published" : "; it was published on node(s) " + committed
              + " only (drop it and load again)"), first);
    }
    published = true;
  }

  /** Drops the table everywhere unless it was published. */
  @Override
  public void close() {
    if (published) {
      return;
    }
    List<CompletableFuture<Frame<Response>>> aborts = new ArrayList<>();
    for (int node : nodes) {
      var connection = channels.connectedOrNull(node);
      if (connection != null) { // a node never reached holds nothing of it
        aborts.add(connection.call(Request.newBuilder().setAbortJob(AbortJob.newBuilder().setJobId(id)
            .setReason("the load into '" + table + "' did not finish"))));
      }
    }
    for (CompletableFuture<Frame<Response>> a : aborts) {
      try {
        NodeChannels.await(a, SssClient.DEFAULT_TIMEOUT).release();
      } catch (RuntimeException ignored) {
        // best effort: a node lost meanwhile drops the table when it starts again
      }
    }
  }

  private List<CompletableFuture<Frame<Response>>> send(Request.Builder request) {
    List<CompletableFuture<Frame<Response>>> answers = new ArrayList<>();
    for (int node : nodes) {
      Request.Builder own = request.clone();
      try {
        answers.add(channels.connection(node).thenCompose(c -> c.call(own)));
      } catch (RuntimeException e) {
        answers.add(CompletableFuture.failedFuture(e));
      }
    }
    return answers;
  }

  private static void awaitAll(List<CompletableFuture<Frame<Response>>> answers) {
    RuntimeException first = null;
    for (CompletableFuture<Frame<Response>> a : answers) {
      try {
        NodeChannels.await(a, SssClient.DEFAULT_TIMEOUT).release();
      } catch (RuntimeException e) {
        first = first != null ? first : NodeChannels.unwrap(e);
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
