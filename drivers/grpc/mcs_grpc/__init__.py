"""MCS gRPC driver: any gRPC service as LLM tools, by server reflection or from ``.proto`` files.

    import mcs
    driver = mcs.load_driver("grpc", target="localhost:50051")              # reflection
    driver = mcs.load_driver("grpc", target="localhost:50051", proto="route_guide.proto")

or ``GrpcDriver(...)`` directly. See :class:`GrpcDriver` for the options.
"""

from mcs_grpc.driver import GrpcDriver

__all__ = ["GrpcDriver"]
