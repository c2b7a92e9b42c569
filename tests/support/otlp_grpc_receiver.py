"""An OTLP/gRPC trace receiver for the trace tests: it listens on 127.0.0.1 (a free port,
printed as `listening PORT` on the first line), and prints each span it is sent as one JSON
line: {"name", "traceId", "spanId", "parentSpanId", "service", "attributes": {key: text}}.
It answers as a collector does (an empty ExportTraceServiceResponse), and stops when its
standard input closes."""

import json
import sys
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def text(value):
    kind = value.WhichOneof("value")
    return str(getattr(value, kind)) if kind else ""


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        metadata = dict(context.invocation_metadata())
        for resource in request.resource_spans:
            service = {a.key: text(a.value) for a in resource.resource.attributes}.get("service.name", "")
            for scope in resource.scope_spans:
                for span in scope.spans:
                    line = {
                        "name": span.name,
                        "traceId": span.trace_id.hex(),
                        "spanId": span.span_id.hex(),
                        "parentSpanId": span.parent_span_id.hex(),
                        "service": service,
                        "team": metadata.get("x-team", ""),
                        "attributes": {a.key: text(a.value) for a in span.attributes},
                    }
                    print(json.dumps(line), flush=True)
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Receiver(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(f"listening {port}", flush=True)
    sys.stdin.read()
    server.stop(0)


if __name__ == "__main__":
    main()
