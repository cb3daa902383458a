from drf_spectacular.extensions import OpenApiAuthenticationExtension


class JWTCookieOrHeaderScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.JWTCookieOrHeaderAuthentication"
    name = ["bearerAuth", "cookieAuth"]

    def get_security_requirement(self, auto_schema):
        # Either credential alone: one requirement object holding both would mean both at once.
        return [{name: []} for name in self.name]

    def get_security_definition(self, auto_schema):
        return [
            {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
            {"type": "apiKey", "in": "cookie", "name": "ff_token"},
        ]
