"""MCS MQTT driver: publish and read through a real broker, described by AsyncAPI or a topic map.

    import mcs
    driver = mcs.load_driver("mqtt", spec="streetlights.yaml", host="127.0.0.1")

or ``MqttDriver(spec=...)`` directly. See :class:`MqttDriver` for the options and
``docs/mqtt.md`` for how a spec maps to tools.
"""

from mcs_mqtt._refs import SpecError
from mcs_mqtt.driver import MqttDriver

__all__ = ["MqttDriver", "SpecError"]
