"""MCS GraphQL driver: any GraphQL API as LLM tools, arguments only as variables.

    import mcs
    driver = mcs.load_driver("graphql", url="http://127.0.0.1:8000/graphql")

or ``GraphQLDriver(url=..., schema=...)`` directly. See :class:`GraphQLDriver` for the options.
"""

from mcs_graphql._inputs import SCALAR_SCHEMAS
from mcs_graphql._limits import Limits
from mcs_graphql._operations import Operation
from mcs_graphql._schema import LoadedSchema, SchemaError
from mcs_graphql.driver import GraphQLDriver

__all__ = ["SCALAR_SCHEMAS", "GraphQLDriver", "Limits", "LoadedSchema", "Operation", "SchemaError"]
