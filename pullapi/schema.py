from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "pullapi.authentication.ApiKeyAuthentication"
    name = "apiKeyAuth"
    match_subclasses = True  # the REST hook endpoints take a key or a session

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "ff_live_ API key"}
