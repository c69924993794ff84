import configparser


EXPECTED = {'server': {'host': '0.0.0.0', 'port': '8080', 'workers': '4'}, 'client': {'timeout': '30', 'retries': '3', 'backoff': 'exponential'}, 'logging': {'log_level': 'info', 'json': 'true'}, 'features': {'enabled': 'true', 'cache': 'false'}}


def test_config_values():
    cp = configparser.ConfigParser()
    cp.read("config/service.ini")
    actual = {s: dict(cp[s]) for s in cp.sections()}
    assert actual == EXPECTED
