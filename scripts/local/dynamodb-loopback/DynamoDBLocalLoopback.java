import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local bound to the loopback interface only (scripts/local/dynamodb.ts runs it as
 * a single-file source program, with DynamoDBLocal.jar on the class path). The jar has no
 * option for the address: its server is Jetty's `new Server(port)`, whose one connector
 * listens on every interface. This builds the server from the same command line as the
 * jar's own main (ServerRunner.createServerFromCommandLineArgs), sets that connector's host
 * to 127.0.0.1 before it starts, and starts it. Telemetry is never configured, so none is sent.
 */
public class DynamoDBLocalLoopback {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost("127.0.0.1");
    proxy.start();
    System.out.println("DynamoDB Local listening on 127.0.0.1 only");
  }
}
