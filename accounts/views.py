from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import device, mailer, registration, services, two_factor
from accounts import serializers as s
from accounts.authentication import signed_in, token_from_request
from accounts.device import Client
from core.api.schema import error
from core.infra import ratelimit
from core.net import client_ip, rate_key

SIGNUP_MESSAGE = "Check your inbox: we sent a 6-digit code to verify your email address."
RESEND_MESSAGE = "If that address needs verification, a new code is on its way."
FORGOT_MESSAGE = "If that address has an account, a code to reset its password is on its way."
# Said instead while the mail server refuses every message: the answer never claims a code
# was sent when none can be. It is the same for every address, so it reveals no account.
NO_MAIL_MESSAGE = (
    "Your request was received, but this server cannot send email right now, so no code was "
    "sent. Ask for a new code once the operator has fixed email delivery."
)


class PublicAuthView(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]
    throttle_group = ""

    def initial(self, request: Request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        if self.throttle_group:
            ratelimit.enforce(
                f"auth:{self.throttle_group}",
                rate_key(client_ip(request)),
                settings.AUTH_REQUESTS_PER_MINUTE,
            )

    def validated(self, serializer_class, request: Request) -> dict:
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data


def set_auth_cookie(response: HttpResponse, token) -> None:
    response.set_cookie(
        settings.AUTH_COOKIE_NAME,
        str(token),
        max_age=int(settings.JWT_LIFETIME.total_seconds()),
        httponly=True,
        secure=settings.AUTH_COOKIE_SECURE,
        samesite="Lax",
        path="/",
    )


def clear_auth_cookie(response: HttpResponse) -> None:
    response.delete_cookie(settings.AUTH_COOKIE_NAME, path="/", samesite="Lax")


def user_response(user, status_code: int = 200) -> Response:
    response = Response({"user": s.UserSerializer(user).data}, status=status_code)
    set_auth_cookie(response, services.token_for(user))
    return response


def _posted_email(request: Request) -> object:
    return request.data.get("email") if isinstance(request.data, dict) else None


class SignupView(PublicAuthView):
    throttle_group = "signup"

    @extend_schema(request=s.SignupSerializer, responses={
        201: s.MessageSerializer,
        403: error("registration_closed: REGISTRATION is closed, or invite and the address "
                   "has no invitation"),
    })
    def post(self, request: Request) -> Response:
        registration.check(_posted_email(request))
        data = self.validated(s.SignupSerializer, request)
        services.user_sign_up(
            email=data["email"], password=data["password"], client=Client.of(request)
        )
        message = NO_MAIL_MESSAGE if mailer.is_failing() else SIGNUP_MESSAGE
        return Response({"message": message}, status=status.HTTP_201_CREATED)


class VerifyEmailView(PublicAuthView):
    throttle_group = "verify"

    @extend_schema(request=s.VerifyEmailSerializer, responses={200: s.UserEnvelopeSerializer})
    def post(self, request: Request) -> Response:
        data = self.validated(s.VerifyEmailSerializer, request)
        user = services.user_verify_email(
            email=data["email"], code=data["code"], client=Client.of(request)
        )
        response = user_response(user)
        # Verification is a sign-in: the owner's device is known from now on, so strangers
        # hammering the address never stop this browser (contract, device cookies).
        device.remember(response, user)
        return response


class ResendCodeView(PublicAuthView):
    throttle_group = "resend"

    @extend_schema(request=s.EmailSerializer, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        data = self.validated(s.EmailSerializer, request)
        services.user_resend_code(email=data["email"])
        return Response({"message": NO_MAIL_MESSAGE if mailer.is_failing() else RESEND_MESSAGE})


class ForgotPasswordView(PublicAuthView):
    throttle_group = "forgot"

    @extend_schema(request=s.EmailSerializer, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        data = self.validated(s.EmailSerializer, request)
        services.user_forgot_password(email=data["email"])
        return Response({"message": NO_MAIL_MESSAGE if mailer.is_failing() else FORGOT_MESSAGE})


class ResetPasswordView(PublicAuthView):
    throttle_group = "reset"

    @extend_schema(request=s.ResetPasswordSerializer, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        data = self.validated(s.ResetPasswordSerializer, request)
        services.user_reset_password(
            email=data["email"], code=data["code"], password=data["password"]
        )
        return Response({"message": "Your password was changed. Log in with the new one."})


# What signing in answers besides a session, by cookie (login) or in the body (token).
SIGN_IN_REFUSALS = {
    401: error(
        "invalid_credentials: the email or password is incorrect; otp_required: two-step "
        "sign-in is on and no otp was sent; invalid_otp: the otp is wrong or was used already"
    ),
    403: error("email_not_verified: verify the address before signing in"),
}


class LoginView(PublicAuthView):
    throttle_group = "login"

    @extend_schema(request=s.CredentialsSerializer,
                   responses={200: s.UserEnvelopeSerializer, **SIGN_IN_REFUSALS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.CredentialsSerializer, request)
        user = services.user_authenticate(
            email=data["email"], password=data["password"], client=Client.of(request),
            otp=data.get("otp"),
        )
        response = user_response(user)
        device.remember(response, user)
        return response


class TokenView(PublicAuthView):
    throttle_group = "login"

    @extend_schema(request=s.CredentialsSerializer,
                   responses={200: s.TokenSerializer, **SIGN_IN_REFUSALS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.CredentialsSerializer, request)
        user = services.user_authenticate(
            email=data["email"], password=data["password"], client=Client.of(request),
            otp=data.get("otp"),
        )
        return Response(
            {
                "accessToken": str(services.token_for(user)),
                "tokenType": "Bearer",
                "expiresIn": int(settings.JWT_LIFETIME.total_seconds()),
            }
        )


class LogoutView(PublicAuthView):
    """Revokes the presented token, if any, and always clears the cookie (CSRF-exempt)."""

    throttle_group = "logout"

    @extend_schema(request=None, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        try:
            raw, _ = token_from_request(request)
        except AuthenticationFailed:  # a malformed header: nothing to revoke
            raw = None
        services.token_revoke_if_valid(raw)
        response = Response({"message": "Logged out."})
        clear_auth_cookie(response)
        return response


class ChangePasswordView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=s.ChangePasswordSerializer, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        serializer = s.ChangePasswordSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = services.user_change_password(
            user=signed_in(request),
            current_password=serializer.validated_data.get("currentPassword"),
            new_password=serializer.validated_data["newPassword"],
            client=Client.of(request),
        )
        response = Response(
            {"message": "Your password was changed. Every other session was logged out."}
        )
        set_auth_cookie(response, services.token_for(user))
        return response


class LogoutAllView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        services.user_log_out_everywhere(user=signed_in(request))
        response = Response({"message": "Logged out everywhere."})
        clear_auth_cookie(response)
        return response


class MeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: s.CurrentUserEnvelopeSerializer})
    def get(self, request: Request) -> Response:
        return Response({"user": s.CurrentUserSerializer(request.user).data})

    @extend_schema(request=s.ProfileSerializer, responses={200: s.CurrentUserEnvelopeSerializer})
    def patch(self, request: Request) -> Response:
        serializer = s.ProfileSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        user = services.user_update_profile(user=signed_in(request), **serializer.validated_data)
        return Response({"user": s.CurrentUserSerializer(user).data})


class TwoFactorSetupView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: s.TwoFactorSetupSerializer})
    def post(self, request: Request) -> Response:
        secret, uri = two_factor.setup(user=signed_in(request))
        return Response({"secret": secret, "otpauthUri": uri})


class TwoFactorEnableView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=s.OtpCodeSerializer, responses={200: s.RecoveryCodesSerializer})
    def post(self, request: Request) -> Response:
        serializer = s.OtpCodeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = signed_in(request)
        codes = two_factor.enable(user=user, code=serializer.validated_data["code"])
        response = Response({"recoveryCodes": codes})
        set_auth_cookie(response, services.token_for(user))  # every other token was revoked
        return response


class TwoFactorDisableView(APIView):
    permission_classes = [IsAuthenticated]
    limits_guesses = True  # wrong passwords and codes count as failed sign-ins: 429 past them

    @extend_schema(request=s.TwoFactorDisableSerializer, responses={200: s.MessageSerializer})
    def post(self, request: Request) -> Response:
        serializer = s.TwoFactorDisableSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = signed_in(request)
        two_factor.disable(user=user, client=Client.of(request), **serializer.validated_data)
        response = Response({"message": "Two-step sign-in is off. Every other session was "
                                        "logged out."})
        set_auth_cookie(response, services.token_for(user))
        return response
