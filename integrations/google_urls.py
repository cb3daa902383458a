from django.urls import path

from integrations.google_views import GoogleCallbackView, GoogleLoginView

urlpatterns = [
    path("login", GoogleLoginView.as_view(), name="google-login"),
    path("callback", GoogleCallbackView.as_view(), name="google-callback"),
]
